// pod-security reads Kubernetes manifests with Kubernetes' own types and
// judges each workload's pod template by Kubernetes' own Pod Security
// admission code (k8s.io/pod-security-admission), as the API server would
// in a namespace labelled pod-security.kubernetes.io/enforce=LEVEL.
//
//	pod-security [-level restricted] FILE...
//
// Prints one JSON line per document: its kind, name and namespace; for a
// Namespace its labels; for a workload whether the level admits its pod,
// each check it fails (reason and detail, Kubernetes' own words), and the
// pod's hostPID and security contexts, so that a test can start the
// containers with exactly what the manifest grants. A document that does
// not decode strictly as its kind (an unknown or misspelt field) is an
// error: exit 1, naming the file and the document.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// Forbidden is one check the pod fails.
type Forbidden struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Container is what a runtime needs to start one container as the
// manifest says.
type Container struct {
	Name            string                  `json:"name"`
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	Env             []corev1.EnvVar         `json:"env,omitempty"`
	VolumeMounts    []corev1.VolumeMount    `json:"volumeMounts,omitempty"`
}

// Document is one line of output.
type Document struct {
	File      string            `json:"file"`
	Kind      string            `json:"kind"`
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	// Set for workloads only.
	Level              string                     `json:"level,omitempty"`
	Allowed            *bool                      `json:"allowed,omitempty"`
	Forbidden          []Forbidden                `json:"forbidden,omitempty"`
	HostPID            bool                       `json:"hostPID,omitempty"`
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	Containers         []Container                `json:"containers,omitempty"`
	Volumes            []corev1.Volume            `json:"volumes,omitempty"`
}

func main() {
	level := flag.String("level", "restricted", "the Pod Security Standard: privileged, baseline or restricted")
	flag.Parse()
	parsed, err := api.ParseLevel(*level)
	if err != nil || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: pod-security [-level privileged|baseline|restricted] FILE...")
		os.Exit(2)
	}
	lv := api.LevelVersion{Level: parsed, Version: api.LatestVersion()}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		fail("pod-security: %v", err)
	}
	out := json.NewEncoder(os.Stdout)
	for _, file := range flag.Args() {
		docs, err := documents(file)
		if err != nil {
			fail("pod-security: %s: %v", file, err)
		}
		for i, doc := range docs {
			d, err := judge(doc, lv, evaluator)
			if err != nil {
				fail("pod-security: %s, document %d: %v", file, i+1, err)
			}
			d.File = file
			if err := out.Encode(d); err != nil {
				fail("pod-security: %v", err)
			}
		}
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// documents splits a file into its YAML documents, empty ones left out.
func documents(file string) ([][]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		// A document of comments alone (a file's opening comment) is none.
		var anything map[string]any
		if err := yaml.Unmarshal(doc, &anything); err != nil {
			return nil, err
		}
		if len(anything) > 0 {
			docs = append(docs, doc)
		}
	}
}

// judge decodes one document strictly as its kind and, for a workload,
// evaluates its pod template.
func judge(doc []byte, lv api.LevelVersion, evaluator policy.Evaluator) (*Document, error) {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return nil, err
	}
	d := &Document{Kind: meta.Kind}
	var object metav1.Object
	var template *corev1.PodTemplateSpec
	var pod *corev1.Pod
	switch meta.Kind {
	case "Namespace":
		var ns corev1.Namespace
		object = &ns
		if err := yaml.UnmarshalStrict(doc, &ns); err != nil {
			return nil, err
		}
		d.Labels = ns.Labels
	case "ConfigMap":
		var cm corev1.ConfigMap
		object = &cm
		if err := yaml.UnmarshalStrict(doc, &cm); err != nil {
			return nil, err
		}
	case "Deployment":
		var w appsv1.Deployment
		object, template = &w, &w.Spec.Template
		if err := yaml.UnmarshalStrict(doc, &w); err != nil {
			return nil, err
		}
	case "DaemonSet":
		var w appsv1.DaemonSet
		object, template = &w, &w.Spec.Template
		if err := yaml.UnmarshalStrict(doc, &w); err != nil {
			return nil, err
		}
	case "StatefulSet":
		var w appsv1.StatefulSet
		object, template = &w, &w.Spec.Template
		if err := yaml.UnmarshalStrict(doc, &w); err != nil {
			return nil, err
		}
	case "Job":
		var w batchv1.Job
		object, template = &w, &w.Spec.Template
		if err := yaml.UnmarshalStrict(doc, &w); err != nil {
			return nil, err
		}
	case "Pod":
		pod = &corev1.Pod{}
		object = pod
		if err := yaml.UnmarshalStrict(doc, pod); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("kind %q is not one this tool reads", meta.Kind)
	}
	d.Name, d.Namespace = object.GetName(), object.GetNamespace()
	if template != nil {
		pod = &corev1.Pod{ObjectMeta: template.ObjectMeta, Spec: template.Spec}
	}
	if pod != nil {
		evaluate(d, pod, lv, evaluator)
	}
	return d, nil
}

func evaluate(d *Document, pod *corev1.Pod, lv api.LevelVersion, evaluator policy.Evaluator) {
	allowed := true
	for _, r := range evaluator.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			allowed = false
			d.Forbidden = append(d.Forbidden, Forbidden{Reason: r.ForbiddenReason, Detail: r.ForbiddenDetail})
		}
	}
	d.Level, d.Allowed = lv.String(), &allowed
	d.HostPID = pod.Spec.HostPID
	d.PodSecurityContext = pod.Spec.SecurityContext
	d.Volumes = pod.Spec.Volumes
	for _, c := range pod.Spec.Containers {
		d.Containers = append(d.Containers, Container{Name: c.Name, SecurityContext: c.SecurityContext, Env: c.Env, VolumeMounts: c.VolumeMounts})
	}
}

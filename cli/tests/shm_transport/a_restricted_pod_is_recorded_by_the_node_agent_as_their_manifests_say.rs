//! The two manifests a cluster operator applies, taken at their word:
//! deploy/sample-app-restricted.yaml (an application under Kubernetes'
//! restricted Pod Security Standard) and deploy/usertrace-daemonset.yaml
//! (the node agent).
//!
//! Kubernetes' own code reads them (harness/pod-security: the API's types,
//! decoded strictly, and the Pod Security admission checks), and says the
//! application's pod passes the restricted level. Then podman starts both
//! containers with exactly what the manifests grant: the application as
//! its securityContext says (its uid, no capability, no_new_privs, a
//! read-only root, the runtime's default seccomp, no volume, and no
//! USERTRACE_* setting: it finds no tracefs and takes shared memory on its
//! own); the agent with the DaemonSet's host PID namespace, its
//! capabilities and nothing else, its user, its read-only root and its
//! one host path (tracefs). The agent lists the pod's tracepoint and
//! records its events exactly, under the name OTEL_SERVICE_NAME gives it,
//! with pid 1 inside and the container id podman gave it; without
//! CAP_DAC_OVERRIDE it says it cannot open the pod's registry, and why.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::podman::{self, Podman};
use crate::support::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// Each document of `manifest` as harness/pod-security reads and judges it
/// at the restricted level (built first if missing: it needs Go).
fn judged(manifest: &str) -> Vec<Value> {
    let build = Command::new(repo().join("harness/build-pod-security")).output().unwrap();
    assert!(build.status.success(), "harness/build-pod-security: {}", String::from_utf8_lossy(&build.stderr));
    let tool = String::from_utf8(build.stdout).unwrap().trim().to_owned();
    let out = Command::new(tool).arg(repo().join(manifest)).output().unwrap();
    assert!(out.status.success(), "{manifest}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn document<'a>(documents: &'a [Value], kind: &str) -> &'a Value {
    documents.iter().find(|d| d["kind"] == kind).unwrap_or_else(|| panic!("no {kind} in {documents:?}"))
}

/// podman's options for a container run as `pod` (a judged workload)
/// says: user, capabilities, privilege escalation, root file system,
/// seccomp, host PID namespace, environment variables (but those whose
/// value comes from the cluster). Anything the mapping does
/// not know fails the test, so a manifest cannot grant more than is run.
fn options_for(pod: &Value) -> Vec<String> {
    let container = &pod["containers"][0];
    let context = &container["securityContext"];
    let pod_context = &pod["podSecurityContext"];
    let mut options = Vec::new();
    let uid = context["runAsUser"].as_u64().or(pod_context["runAsUser"].as_u64()).expect("a runAsUser");
    let gid = context["runAsGroup"].as_u64().or(pod_context["runAsGroup"].as_u64()).unwrap_or(uid);
    options.push(format!("--user={uid}:{gid}"));
    assert_eq!(context["capabilities"]["drop"], serde_json::json!(["ALL"]), "{context}");
    options.push("--cap-drop=all".into());
    for cap in context["capabilities"]["add"].as_array().into_iter().flatten() {
        options.push(format!("--cap-add=CAP_{}", cap.as_str().unwrap()));
    }
    assert_eq!(context["allowPrivilegeEscalation"], false, "{context}");
    options.push("--security-opt=no-new-privileges".into());
    assert!(!context["privileged"].as_bool().unwrap_or(false), "not privileged: {context}");
    if context["readOnlyRootFilesystem"] == true {
        options.push("--read-only".into());
    }
    // RuntimeDefault is the runtime's own profile, podman's default; none
    // at all is Kubernetes' default, Unconfined (the kubelet's
    // SeccompDefault off).
    let seccomp = context["seccompProfile"]["type"].as_str().or(pod_context["seccompProfile"]["type"].as_str());
    match seccomp {
        Some("RuntimeDefault") => {}
        None | Some("Unconfined") => options.push("--security-opt=seccomp=unconfined".into()),
        Some(other) => panic!("seccompProfile {other}: not mapped"),
    }
    if pod["hostPID"] == true {
        options.push("--pid=host".into());
    }
    // A value from the cluster (the node's address) has no meaning here.
    for var in container["env"].as_array().into_iter().flatten().filter(|v| v["valueFrom"].is_null()) {
        options.push(format!("--env={}={}", var["name"].as_str().unwrap(), var["value"].as_str().unwrap_or_default()));
    }
    options
}

/// The DaemonSet's host paths, mounted where its container mounts them
/// (read-only if it says so); other volumes (its ConfigMap) are not needed
/// to record.
fn host_paths(daemonset: &Value) -> Vec<String> {
    let mut mounts = Vec::new();
    for volume in daemonset["volumes"].as_array().unwrap() {
        let Some(host) = volume["hostPath"]["path"].as_str() else { continue };
        let mount = daemonset["containers"][0]["volumeMounts"].as_array().unwrap().iter().find(|m| m["name"] == volume["name"]).unwrap();
        let ro = if mount["readOnly"] == true { ":ro" } else { "" };
        mounts.push(format!("--volume={host}:{}{ro}", mount["mountPath"].as_str().unwrap()));
    }
    mounts
}

#[test]
fn a_restricted_pod_is_recorded_by_the_node_agent_as_their_manifests_say() {
    let app_manifest = judged("deploy/sample-app-restricted.yaml");
    let namespace = document(&app_manifest, "Namespace");
    assert_eq!(namespace["labels"]["pod-security.kubernetes.io/enforce"], "restricted", "{namespace}");
    let app = document(&app_manifest, "Deployment");
    assert_eq!(app["allowed"], true, "the restricted level refuses the sample app: {}", app["forbidden"]);
    assert!(app["volumes"].is_null() && app["containers"][0]["volumeMounts"].is_null(), "no volume for tracing: {app}");
    let agent_manifest = judged("deploy/usertrace-daemonset.yaml");
    let agent = document(&agent_manifest, "DaemonSet");
    // The agent is privileged by design; Kubernetes says exactly how.
    let refused: BTreeSet<&str> = agent["forbidden"].as_array().unwrap().iter().map(|f| f["reason"].as_str().unwrap()).collect();
    assert!(refused.contains("host namespaces") && refused.contains("unrestricted capabilities"), "{refused:?}");

    if !podman::installed() {
        return;
    }
    let _one = crate::container::exclusive();
    let name = unique("shm_pod");
    let mut podman = Podman::new(&name);
    let app_root = podman.rootfs("app", &[&ut_emit()]);
    let env = app["containers"][0]["env"].as_array().expect("the app's env");
    let service = env.iter().find(|v| v["name"] == "OTEL_SERVICE_NAME").and_then(|v| v["value"].as_str()).expect("OTEL_SERVICE_NAME");
    let mut producer = Podman::start_ready(
        podman.run(&name).args(options_for(app)).arg("--rootfs").arg(&app_root).args(["/usr/bin/ut_emit", "seq", &name, "10", "100000"]),
    );
    let app_id = podman.id(&name);

    let agent_root = podman.rootfs("agent", &[&usertrace(), Path::new("/bin/sleep")]);
    let granted = options_for(agent);
    let in_agent_with = |options: &[String], args: &[&str], suffix: &str| {
        podman
            .command()
            .args(["run", "--rm", "--name", &format!("{name}-{suffix}")])
            .args(options)
            .args(host_paths(agent))
            .arg("--rootfs")
            .arg(&agent_root)
            .arg("/usr/bin/usertrace")
            .args(args)
            .output()
            .unwrap()
    };
    let in_agent = |args: &[&str], suffix: &str| in_agent_with(&granted, args, suffix);
    // Each privilege is there for a reason: without CAP_DAC_OVERRIDE the
    // pod's registry (its user's, 0600) cannot be opened, and `list` says
    // so, and what to grant, rather than only that nothing matches.
    let without: Vec<String> = granted.iter().filter(|o| *o != "--cap-add=CAP_DAC_OVERRIDE").cloned().collect();
    assert!(without.len() < granted.len(), "the DaemonSet grants CAP_DAC_OVERRIDE: {granted:?}");
    let refused = in_agent_with(&without, &["list", &name], "refused");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(said.contains("/dev/shm/usertrace-1000/") && said.contains("run the recorder as root with CAP_DAC_OVERRIDE"), "{said}");

    let list = in_agent(&["list", "--format", "json", &name], "list");
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success(), "{listed}{}", String::from_utf8_lossy(&list.stderr));
    let listed: Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!((listed["name"].as_str(), listed["transport"].as_str()), (Some(name.as_str()), Some("shm")), "{listed}");

    let out = in_agent(&["record", "-e", &name, "--format", "json", "--", "/usr/bin/sleep", "2.5"], "record");
    let _ = producer.kill();
    let _ = producer.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let values: Vec<u64> = event_lines(&stdout).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(values, (0..10).collect::<Vec<_>>(), "{stderr}");
    let process: Value =
        stdout.lines().find(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str(l).unwrap()).expect("a process record");
    assert_eq!(process["pid_in_container"], 1, "{process}");
    assert_eq!(process["container_id"], app_id.as_str(), "{process}");
    assert_eq!(process["resource"]["service.name"], service, "{process}");
    assert_eq!(listed["pids"], serde_json::json!([process["pid"]]), "list names the host pid");
}

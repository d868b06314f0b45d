//! `usertrace record --otlp` over a real producer, in the kernel: the
//! spans ut_emit emits (nested, one ended on another thread, a forked
//! child's unfinished one) reach a real Jaeger while the recording runs,
//! under their process's name as the service, with their parents and
//! exact attribute values, and the stderr summary accounts for every
//! event. (`usertrace stat` takes no `--otlp`, so this summary is where
//! drops are told.)
//!
//! Jaeger is the binary harness/build-otel-components built (found as the
//! host tests find it), started inside the guest on its own loopback.
//! A kernel test never passes by skipping: without Jaeger it fails.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::support::*;

#[path = "../otel_components/mod.rs"]
mod otel_components;
use otel_components::{component, free_port, TempDir};

/// A Jaeger process (in-memory storage, OTLP/HTTP and the query API on
/// 127.0.0.1), killed when dropped.
struct Jaeger {
    child: Child,
    otlp_http: u16,
    query: u16,
    dir: TempDir,
}

impl Drop for Jaeger {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Jaeger {
    fn start(binary: &Path, name: &str) -> Jaeger {
        let dir = TempDir::new(&format!("{name}-jaeger"));
        let (otlp_http, query, query_grpc) = (free_port(), free_port(), free_port());
        let config = format!(
            r#"
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:{query}
    grpc:
      endpoint: 127.0.0.1:{query_grpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{otlp_http}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
"#
        );
        let config_path = dir.0.join("jaeger.yaml");
        std::fs::write(&config_path, config).unwrap();
        let log = std::fs::File::create(dir.0.join("jaeger.log")).unwrap();
        let child = Command::new(binary)
            .arg("--config")
            .arg(&config_path)
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut jaeger = Jaeger { child, otlp_http, query, dir };
        // Under emulation (the guest without KVM) Jaeger takes a long
        // while to come up; the recording must not start before it.
        let deadline = Instant::now() + Duration::from_secs(300);
        while get(query, "/api/services").is_none() {
            if let Ok(Some(status)) = jaeger.child.try_wait() {
                panic!("jaeger exited with {status}:\n{}", jaeger.log());
            }
            assert!(Instant::now() < deadline, "jaeger's query API did not come up in 300 s:\n{}", jaeger.log());
            std::thread::sleep(Duration::from_millis(500));
        }
        jaeger
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.0.join("jaeger.log")).unwrap_or_default()
    }
}

/// GET on the query API, as JSON; `None` while it is not answering.
fn get(port: u16, path: &str) -> Option<Json> {
    let mut response = ureq::get(&format!("http://127.0.0.1:{port}{path}")).call().ok()?;
    serde_json::from_str(&response.body_mut().read_to_string().ok()?).ok()
}

/// Every span whose name starts with `prefix`, of every service, each
/// with its process (`serviceName` and tags), once `expected` of them
/// are stored.
fn spans_named(jaeger: &Jaeger, prefix: &str, expected: usize) -> Vec<(Json, Json)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let services = get(jaeger.query, "/api/services").unwrap_or(Json::Null);
        let mut spans = Vec::new();
        for service in services["data"].as_array().into_iter().flatten().filter_map(Json::as_str) {
            let got = get(jaeger.query, &format!("/api/traces?service={service}&lookback=1h&limit=100")).unwrap_or(Json::Null);
            for trace in got["data"].as_array().into_iter().flatten() {
                for span in trace["spans"].as_array().into_iter().flatten() {
                    let ours = span["operationName"].as_str().is_some_and(|n| n.starts_with(prefix));
                    // A trace is listed under each of its services; keep each span once.
                    if ours && !spans.iter().any(|(s, _): &(Json, Json)| s["spanID"] == span["spanID"]) {
                        let process = trace["processes"][span["processID"].as_str().unwrap()].clone();
                        spans.push((span.clone(), process));
                    }
                }
            }
        }
        if spans.len() >= expected {
            return spans;
        }
        assert!(Instant::now() < deadline, "{} of {expected} spans arrived in 60 s: services {services}, spans {spans:#?}", spans.len());
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn tag(span: &Json, key: &str) -> Json {
    let tags = span["tags"].as_array().unwrap_or_else(|| panic!("no tags: {span}"));
    tags.iter().find(|t| t["key"] == key).map(|t| json!({"type": t["type"], "value": t["value"]})).unwrap_or(Json::Null)
}

fn parent(span: &Json) -> Option<String> {
    let refs = span["references"].as_array()?;
    let r = refs.iter().find(|r| r["refType"] == "CHILD_OF")?;
    assert_eq!(r["traceID"], span["traceID"], "a parent in another trace");
    Some(r["spanID"].as_str()?.to_owned())
}

fn process_tag(process: &Json, key: &str) -> Json {
    let tags = process["tags"].as_array().unwrap_or_else(|| panic!("no process tags: {process}"));
    tags.iter().find(|t| t["key"] == key).map(|t| t["value"].clone()).unwrap_or(Json::Null)
}

#[test]
fn live_spans_reach_jaeger_with_their_service_parents_and_attributes() {
    let binary = component("jaeger").expect("a kernel test never skips: build jaeger with harness/build-otel-components");
    let name = unique("otlp_live");
    let jaeger = Jaeger::start(&binary, &name);

    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}_*"), "--otlp", &format!("http://127.0.0.1:{}", jaeger.otlp_http), "--"])
        .arg(ut_emit())
        .args(["spans", &name])
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "record failed: {stderr}\njaeger:\n{}", jaeger.log());
    let pid: u64 = stdout.lines().find_map(|l| l.strip_prefix("ready ")).expect("ut_emit said ready").trim().parse().unwrap();
    let child: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("spans "))
        .and_then(|l| l.split(' ').find_map(|kv| kv.strip_prefix("child=")))
        .expect("ut_emit printed its child's pid")
        .parse()
        .unwrap();

    // Eight events (four begins, three ends, one note) make four spans; the
    // note is a log record, which Jaeger does not take.
    assert!(
        stderr.contains("usertrace record: OTLP: 8 events exported (4 spans, 0 log records), 0 dropped (queue full or unsent at exit), 0 failed"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("http://127.0.0.1:{}/v1/logs answered 404", jaeger.otlp_http)), "{stderr}");

    let spans = spans_named(&jaeger, &name, 4);
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let op = |suffix: &str| {
        spans.iter().find(|(s, _)| s["operationName"] == format!("{name}_{suffix}")).unwrap_or_else(|| panic!("no span {suffix} in {spans:#?}"))
    };

    let (outer, process) = op("outer");
    assert_eq!(process["serviceName"], "ut_emit");
    assert_eq!(process_tag(process, "process.pid"), json!(pid));
    assert_eq!(process_tag(process, "process.executable.name"), json!("ut_emit"));
    assert_eq!(process_tag(process, "process.command_line"), json!(format!("{} spans {name}", ut_emit().display())));
    assert_eq!(parent(outer), None);
    assert_eq!(tag(outer, "request_id"), json!({"type": "int64", "value": 5_000_000_000u64}));
    assert_eq!(tag(outer, "label"), json!({"type": "string", "value": "héllo ✓"}));
    assert_eq!(tag(outer, "thread.id"), json!({"type": "int64", "value": pid}));

    let (inner, process) = op("inner");
    assert_eq!(process["serviceName"], "ut_emit");
    assert_eq!(parent(inner).as_deref(), outer["spanID"].as_str(), "inner was begun inside outer on its thread");
    assert_eq!(tag(inner, "depth"), json!({"type": "int64", "value": -7}));
    assert_eq!(tag(inner, "ratio"), json!({"type": "float64", "value": 0.25}));
    assert_eq!(tag(inner, "unfinished"), Json::Null);

    // Begun after outer ended, ended on ut_span_ender: its own trace, on
    // the thread that began it.
    let (handoff, process) = op("handoff");
    assert_eq!(process["serviceName"], "ut_emit");
    assert_eq!(parent(handoff), None);
    assert_ne!(handoff["traceID"], outer["traceID"]);
    assert_eq!(tag(handoff, "thread.id"), json!({"type": "int64", "value": pid}));
    assert_eq!(tag(handoff, "unfinished"), Json::Null);

    // The forked child never exec'd: its service is the name its events
    // carried, the one it gave itself.
    let (orphaned, process) = op("orphaned");
    assert_eq!(process["serviceName"], "ut_span_child", "{process:#}");
    assert_eq!(process_tag(process, "process.pid"), json!(child));
    assert_eq!(parent(orphaned), None);
    assert_eq!(tag(orphaned, "thread.id"), json!({"type": "int64", "value": child}));
    assert_eq!(tag(orphaned, "thread.name"), json!({"type": "string", "value": "ut_span_child"}));
    assert_eq!(tag(orphaned, "unfinished"), json!({"type": "string", "value": "process exited"}));
}

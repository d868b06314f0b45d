//! The main job's programs, exported live: `usertrace record --otlp` over
//! the demo's chain (a Rust front, a C service, a Python worker and a Java
//! app with the agent, each built by `harness/demo --build-only`), to a
//! real Jaeger in the kernel. Every request's span from each language
//! arrives under its process's own service (`OTEL_SERVICE_NAME`), nested
//! as it was begun, with its exact request id and path; each request is
//! one trace, each stage's span the child of its caller's, through the
//! `traceparent` the stages hand on.
//!
//! The chain is read from `/tmp/usertrace-demo/chain` (one argument per
//! line), which harness/demo writes and harness/test-all builds before
//! the guest boots. A kernel test never passes by skipping: without the
//! chain or Jaeger it fails, saying what to build.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value as Json};

use crate::otel_components::jaeger::{parent, process_tag, tag, Jaeger};
use crate::otel_components::{component, TempDir};
use crate::support::*;

/// The demo front's paths, by request id modulo 4 (demo-front.rs).
const PATHS: [&str; 4] = ["/", "/index.html", "/api/v1/users", "/café"];
const REQUESTS: u64 = 4;

fn chain() -> Vec<String> {
    let dir = std::env::var("USERTRACE_DEMO_DIR").unwrap_or_else(|_| "/tmp/usertrace-demo".into());
    let file = Path::new(&dir).join("chain");
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; build the demo first with harness/demo --build-only", file.display()));
    text.lines().map(str::to_owned).collect()
}

/// Start time and end time in µs, as Jaeger stores them.
fn interval(span: &Json) -> (u64, u64) {
    let start = span["startTime"].as_u64().unwrap();
    (start, start + span["duration"].as_u64().unwrap())
}

#[test]
fn every_request_reaches_jaeger_from_all_four_languages_nested_in_its_caller() {
    let binary = component("jaeger").expect("a kernel test never skips: build jaeger with harness/build-otel-components");
    let chain = chain();
    let jaeger = Jaeger::start(&binary, "demo", None);
    let dir = TempDir::new("demo-otlp");
    let archive = dir.0.join("demo.jsonl");

    let out = Command::new(usertrace())
        .args(["record", "-e", "demo_*", "--otlp", &jaeger.endpoint(), "-o"])
        .arg(&archive)
        .args(["--", "env", "OTEL_SERVICE_NAME=demo-front"])
        .arg(&chain[0])
        .arg(REQUESTS.to_string())
        .args(&chain[1..])
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "record failed: {stderr}\njaeger:\n{}", jaeger.log());
    assert!(stdout.contains(&format!("demo-front: {REQUESTS} requests answered by all four languages")), "{stdout}\n{stderr}");
    // Six spans per request (front, C handle and parse, Python work and
    // checksum, Java lookup), all sent.
    let summary = stderr.lines().find(|l| l.starts_with("usertrace record: OTLP: ")).unwrap_or_else(|| panic!("no OTLP summary in {stderr}"));
    assert!(summary.contains(&format!("({} spans, ", 6 * REQUESTS)), "{summary}");
    assert!(summary.contains(" 0 dropped (queue full or unsent at exit), 0 failed"), "{summary}");

    // Each process's pid, by executable name, from the archive written
    // in the same run: the resource must name the same processes.
    let mut pids = BTreeMap::new();
    for line in std::fs::read_to_string(&archive).unwrap().lines() {
        let record: Json = serde_json::from_str(line).unwrap();
        if record["type"] == "process" {
            let exe = record["executable"].as_str().unwrap();
            pids.insert(exe.rsplit('/').next().unwrap().to_owned(), record["pid"].clone());
        }
    }
    // The worker's program is the interpreter the venv's `python` links to,
    // the argument after its service's name in the chain.
    let python_at = chain.iter().position(|a| a == "OTEL_SERVICE_NAME=demo-py").expect("the Python stage's service") + 1;
    let python = std::fs::canonicalize(&chain[python_at]).unwrap();
    let python = python.file_name().unwrap().to_str().unwrap().to_owned();
    // Each stage's service (its OTEL_SERVICE_NAME), its program, its spans.
    let services = [("demo-front", "demo-front", 4), ("demo-c", "service", 8), ("demo-py", python.as_str(), 8), ("demo-java", "java", 4)];

    // Every span with its own process: a trace now holds all four
    // services, so Jaeger's query by service returns the others' too.
    let spans = jaeger.spans_named("demo_", 6 * REQUESTS as usize);
    assert_eq!(spans.len(), 6 * REQUESTS as usize, "{spans:#?}");
    let mut by_name: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    for (service, program, count) in services {
        let of_service: Vec<&(Json, Json)> = spans.iter().filter(|(_, p)| p["serviceName"] == service).collect();
        assert_eq!(of_service.len(), count, "{service}: {of_service:#?}");
        for (span, process) in of_service {
            assert_eq!(process_tag(process, "process.executable.name"), json!(program), "{process:#}");
            assert_eq!(process_tag(process, "process.pid"), pids[program], "{service}'s pid is the one the archive recorded");
            by_name.entry(span["operationName"].as_str().unwrap().to_owned()).or_default().push(span.clone());
        }
    }
    let names: Vec<&str> = by_name.keys().map(String::as_str).collect();
    assert_eq!(names, ["demo_c_handle", "demo_c_parse", "demo_java_lookup", "demo_py_checksum", "demo_py_work", "demo_request"]);

    // The span of `name` for request `id`, found by its exact attributes.
    let of = |name: &str, id: u64| -> &Json {
        let spans = &by_name[name];
        let matching: Vec<&Json> = spans.iter().filter(|s| tag(s, "request_id") == json!({"type": "int64", "value": id})).collect();
        assert_eq!(matching.len(), 1, "{name} of request {id}: {spans:#?}");
        let span = matching[0];
        assert_eq!(tag(span, "path"), json!({"type": "string", "value": PATHS[id as usize % 4]}), "{span:#}");
        span
    };
    let child_of = |name: &str, parents: &[Json]| {
        for span in &by_name[name] {
            let p = parent(span).unwrap_or_else(|| panic!("{name} has no parent: {span:#}"));
            assert!(parents.iter().any(|q| q["spanID"] == p.as_str()), "{name}'s parent is not a span it was begun in: {span:#}");
        }
    };
    // Nested on their thread: C's parse inside handle, Python's
    // @traced checksum inside work.
    child_of("demo_c_parse", &by_name["demo_c_handle"]);
    child_of("demo_py_checksum", &by_name["demo_py_work"]);

    for id in 1..=REQUESTS {
        // One timeline: each stage's span lies inside its caller's.
        let stages = ["demo_request", "demo_c_handle", "demo_py_work", "demo_java_lookup"].map(|n| of(n, id));
        for pair in stages.windows(2) {
            let (outer, inner) = (interval(pair[0]), interval(pair[1]));
            assert!(outer.0 <= inner.0 && inner.1 <= outer.1, "request {id}: {} {outer:?} does not hold {} {inner:?}", pair[0]["operationName"], pair[1]["operationName"]);
        }
        // One trace per request: the front's span is its root, and each
        // stage's span the child of its caller's, in another process.
        assert_eq!(parent(stages[0]), None, "the front's span is the root: {:#}", stages[0]);
        for pair in stages.windows(2) {
            assert_eq!(pair[1]["traceID"], pair[0]["traceID"], "request {id}: one trace: {:#} {:#}", pair[0], pair[1]);
            assert_eq!(parent(pair[1]).as_deref(), pair[0]["spanID"].as_str(), "request {id}: {:#}'s parent", pair[1]);
        }
    }
}

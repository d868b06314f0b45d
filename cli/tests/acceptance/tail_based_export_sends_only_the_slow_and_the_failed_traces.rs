//! `usertrace record --otlp URL --tail 'handle>250ms' --tail error`, in the
//! kernel, over 20 requests whose traces cross two processes (consumer's
//! `otel_requests_producer`: the frontend's `request` and `call_backend`,
//! the backend's `handle`, linked by the ids the OpenTelemetry SDK gave
//! them). Request 7's `handle` takes 500 ms, request 13's fails. Of the
//! 20 traces, exactly those two reach a real Jaeger, each whole: its three
//! spans from both processes, parent by parent. The stderr summary counts
//! the 18 dropped here.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value as Json};

use crate::otel_components::component;
use crate::otel_components::jaeger::{get, parent, process_tag, tag, Jaeger};
use crate::support::*;

const REQUESTS: u64 = 20;
const SLOW: u64 = 7;
const FAILED: u64 = 13;

#[test]
fn tail_based_export_sends_only_the_slow_and_the_failed_traces() {
    let binary = component("jaeger").expect("a kernel test never skips: build jaeger with harness/build-otel-components");
    let name = unique("tail");
    let producer = usertrace().parent().unwrap().join("examples/otel_requests_producer");
    assert!(producer.exists(), "{} is missing: build the consumer's examples", producer.display());
    let jaeger = Jaeger::start(&binary, &name, None);
    let out = Command::new(usertrace())
        .args(["record", "-e", "UsertraceOtelTraces:L4K1", "--otlp", &jaeger.endpoint(), "--service", &name])
        .args(["--tail", "handle>250ms", "--tail", "error", "--"])
        .arg(&producer)
        .args([REQUESTS, SLOW, FAILED].map(|n| n.to_string()))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "record failed: {stderr}\njaeger:\n{}", jaeger.log());

    // The trace id the SDK gave each request, as the frontend printed it.
    let trace_of: BTreeMap<u64, String> = stdout
        .lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix("trace ")?.split(' ');
            Some((words.next()?.parse().ok()?, words.next()?.to_owned()))
        })
        .collect();
    assert_eq!(trace_of.len(), REQUESTS as usize, "{stdout}");
    let summary = stderr.lines().find(|l| l.contains("OTLP:")).unwrap_or_else(|| panic!("no summary: {stderr}"));
    assert!(summary.contains("6 events exported (6 spans, 0 log records), 0 dropped"), "{summary}");
    assert!(summary.contains("--tail kept 2 traces and dropped 18 (54 spans, 0 log records, 54 events)"), "{summary}");

    let (spans, _) = jaeger.spans_of(&name, 6);
    // Everything was sent before record exited; give Jaeger a moment to
    // store anything else it was sent, then read all it has.
    std::thread::sleep(Duration::from_secs(1));
    let got = get(jaeger.query, &format!("/api/traces?service={name}&lookback=1h&limit=1000")).unwrap();
    let traces = got["data"].as_array().unwrap();
    let ids: Vec<&str> = traces.iter().map(|t| t["traceID"].as_str().unwrap()).collect();
    let mut wanted = vec![trace_of[&SLOW].as_str(), trace_of[&FAILED].as_str()];
    let mut ids_sorted = ids.clone();
    ids_sorted.sort_unstable();
    wanted.sort_unstable();
    assert_eq!(ids_sorted, wanted, "only the slow and the failed requests' traces; spans: {spans:#?}");

    for trace in traces {
        let id = trace["traceID"].as_str().unwrap();
        let request = if id == trace_of[&SLOW] { SLOW } else { FAILED };
        let spans = trace["spans"].as_array().unwrap();
        let named = |n: &str| -> &Json {
            let all: Vec<&Json> = spans.iter().filter(|s| s["operationName"] == n).collect();
            assert_eq!(all.len(), 1, "trace {id} (request {request}) has one {n}: {spans:#?}");
            all[0]
        };
        assert_eq!(spans.len(), 3, "request {request}: {spans:#?}");
        let (root, call, handle) = (named("request"), named("call_backend"), named("handle"));
        assert_eq!(parent(root), None);
        assert_eq!(parent(call).as_deref(), root["spanID"].as_str());
        assert_eq!(parent(handle).as_deref(), call["spanID"].as_str(), "the backend's span is the remote child");
        assert_eq!(tag(root, "request"), json!({"type": "int64", "value": request}), "the SDK's attribute, by its name");
        let pid = |s: &Json| process_tag(&trace["processes"][s["processID"].as_str().unwrap()], "process.pid");
        assert_eq!(pid(root), pid(call));
        assert_ne!(pid(root), pid(handle), "the backend is a process of its own");
        if request == SLOW {
            assert!(handle["duration"].as_u64().unwrap() > 250_000, "{handle}");
            assert_eq!(tag(handle, "error"), Json::Null);
        } else {
            assert_eq!(tag(handle, "error"), json!({"type": "bool", "value": true}), "{handle}");
            assert_eq!(tag(handle, "otel.status_description"), json!({"type": "string", "value": "card declined"}), "{handle}");
            assert!(handle["duration"].as_u64().unwrap() < 250_000, "{handle}");
        }
    }
}

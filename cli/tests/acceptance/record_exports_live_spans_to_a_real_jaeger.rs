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

use std::process::Command;

use serde_json::{json, Value as Json};

use crate::support::*;

use crate::otel_components::component;
use crate::otel_components::jaeger::{parent, process_tag, tag, Jaeger};

#[test]
fn live_spans_reach_jaeger_with_their_service_parents_and_attributes() {
    let binary = component("jaeger").expect("a kernel test never skips: build jaeger with harness/build-otel-components");
    let name = unique("otlp_live");
    let jaeger = Jaeger::start(&binary, &name, None);

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

    let spans = jaeger.spans_named(&name, 4);
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

//! Spans from a program that uses the OpenTelemetry SDK with its
//! user_events trace exporter (consumer's `otel_traces_producer`), which
//! writes each finished span as one EventHeader event in Common Schema
//! layout. `usertrace record` runs the program, selecting the exporter's
//! provider by level and keyword; the tracepoint appears only after the
//! program starts, so the rescan must attach it. The recording converted to
//! Chrome JSON holds the two spans under their own names, nested, each
//! exactly as long as its start and end stamps say, with the span's
//! attributes as args. The same recording goes live to a real Jaeger
//! (`--otlp`), where the spans keep the trace, span and parent ids the
//! program's SDK gave them, so they join the rest of its trace.

use serde_json::{json, Value};

use crate::otel_components::component;
use crate::otel_components::jaeger::{parent, tag, Jaeger};
use crate::support::*;

/// Microseconds with three decimals (Chrome's `ts` and `dur`) as ns.
fn ns(micros: &Value) -> u64 {
    (micros.as_f64().unwrap() * 1000.0).round() as u64
}

/// An RFC 3339 stamp as ns since the epoch.
fn stamp_ns(v: &Value) -> i128 {
    let s = v.as_str().unwrap();
    let t = chrono::DateTime::parse_from_rfc3339(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    i128::from(t.timestamp()) * 1_000_000_000 + i128::from(t.timestamp_subsec_nanos())
}

#[test]
fn opentelemetry_spans_written_to_user_events_become_timeline_spans() {
    let name = unique("otel_traces");
    let producer = usertrace().parent().unwrap().join("examples/otel_traces_producer");
    assert!(producer.exists(), "{} is missing: build the consumer's examples", producer.display());
    let binary = component("jaeger").expect("a kernel test never skips: build jaeger with harness/build-otel-components");
    let jaeger = Jaeger::start(&binary, &name, None);
    let jsonl = format!("/tmp/{name}.jsonl");
    let chrome = format!("/tmp/{name}.json");
    let otlp = jaeger.endpoint();
    usertrace_ok(&["record", "-e", "UsertraceOtelTraces:L4K1", "-o", &jsonl, "--otlp", &otlp, "--", producer.to_str().unwrap()]);
    usertrace_ok(&["convert", &jsonl, &chrome]);
    let recorded = std::fs::read_to_string(&jsonl).unwrap();
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&chrome).unwrap()).unwrap();
    let _ = (std::fs::remove_file(&jsonl), std::fs::remove_file(&chrome));

    // The exporter's events, inner span first: it writes a span as it ends.
    let events: Vec<Value> = recorded
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "event")
        .collect();
    // Each is the exporter's `Span` event, its Common Schema parts A, B
    // and C structs, as tracepoint_decode gives them.
    let names: Vec<(&str, &str, &str)> = events
        .iter()
        .map(|e| (e["event"].as_str().unwrap(), e["tracepoint"].as_str().unwrap(), e["fields"]["PartB"]["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [("UsertraceOtelTraces:Span", "UsertraceOtelTraces_L4K1", "charge"), ("UsertraceOtelTraces:Span", "UsertraceOtelTraces_L4K1", "checkout")],
        "{recorded}"
    );
    let (charge, checkout) = (&events[0]["fields"], &events[1]["fields"]);
    assert_eq!(charge["PartB"]["parentId"], checkout["PartA"]["ext_dt_spanId"], "{recorded}");
    assert_eq!(charge["PartA"]["ext_dt_traceId"], checkout["PartA"]["ext_dt_traceId"]);
    let pid = events[0]["pid"].as_u64().unwrap();

    let trace_events = trace["traceEvents"].as_array().unwrap();
    let process_name = trace_events
        .iter()
        .find(|e| e["ph"] == "M" && e["name"] == "process_name" && e["pid"].as_u64() == Some(pid))
        .unwrap_or_else(|| panic!("no process_name for {pid}: {trace}"));
    assert_eq!(process_name["args"]["name"], "otel_traces_producer");

    // Each span: a `b`/`e` pair (a completed span goes on an async track).
    let span = |span_name: &str| -> (u64, u64, Value) {
        let begin = trace_events
            .iter()
            .find(|e| e["ph"] == "b" && e["name"] == span_name)
            .unwrap_or_else(|| panic!("no span {span_name}: {trace}"));
        let end = trace_events.iter().find(|e| e["ph"] == "e" && e["id"] == begin["id"]).unwrap();
        assert_eq!((begin["pid"].as_u64(), end["name"].as_str()), (Some(pid), Some(span_name)));
        (ns(&begin["ts"]), ns(&end["ts"]), begin["args"].clone())
    };
    let (charge_start, charge_end, charge_args) = span("charge");
    let (checkout_start, checkout_end, checkout_args) = span("checkout");
    for (fields, start, end, event) in
        [(charge, charge_start, charge_end, &events[0]), (checkout, checkout_start, checkout_end, &events[1])]
    {
        // As long as its own stamps say, ending when its event was written.
        let length = stamp_ns(&fields["PartA"]["time"]) - stamp_ns(&fields["PartB"]["startTime"]);
        assert_eq!(i128::from(end - start), length, "{fields}");
        assert_eq!(end, event["time_ns"].as_u64().unwrap());
    }
    assert!(charge_end - charge_start >= 20_000_000, "charge slept 20 ms: {}", charge_end - charge_start);
    assert!(checkout_start < charge_start && charge_end < checkout_end, "charge inside checkout");
    assert_eq!(charge_args["PartC"]["amount"], 12.5);
    assert_eq!(checkout_args["PartC"]["user_id"], 42);
    assert_eq!(checkout_args["meta.provider"], "UsertraceOtelTraces");

    // In Jaeger: the SDK's own ids, and the parent it named.
    let (spans, processes) = jaeger.spans_of("otel_traces_producer", 2);
    let by_name = |n: &str| spans.iter().find(|s| s["operationName"] == n).unwrap_or_else(|| panic!("no {n} in {spans:#?}"));
    let (charge_span, checkout_span) = (by_name("charge"), by_name("checkout"));
    assert_eq!(charge_span["traceID"], charge["PartA"]["ext_dt_traceId"]);
    assert_eq!(checkout_span["traceID"], checkout["PartA"]["ext_dt_traceId"]);
    assert_eq!(charge_span["spanID"], charge["PartA"]["ext_dt_spanId"]);
    assert_eq!(checkout_span["spanID"], checkout["PartA"]["ext_dt_spanId"]);
    assert_eq!(parent(charge_span).as_deref(), checkout_span["spanID"].as_str(), "{processes}");
    assert_eq!(parent(checkout_span), None);
    // The SDK's attribute under its own name; the Common Schema envelope
    // is the span itself, not attributes.
    assert_eq!(tag(charge_span, "amount"), json!({"type": "float64", "value": 12.5}));
    assert_eq!(tag(checkout_span, "user_id"), json!({"type": "int64", "value": 42}));
    for envelope in ["PartA", "PartB", "PartC", "PartA.ext_dt_traceId", "PartB.name", "PartB.startTime", "meta.provider", "PartC.amount"] {
        assert_eq!(tag(charge_span, envelope), Value::Null, "{envelope}: {charge_span}");
    }
    // Jaeger keeps microseconds: the length the stamps give, to the µs.
    let length_us = (stamp_ns(&charge["PartA"]["time"]) - stamp_ns(&charge["PartB"]["startTime"])) / 1000;
    assert_eq!(i128::from(charge_span["duration"].as_u64().unwrap()), length_us);
}

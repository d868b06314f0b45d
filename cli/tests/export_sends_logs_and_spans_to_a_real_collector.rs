//! `usertrace export` against a real OpenTelemetry Collector, made by the
//! Collector builder with the OTLP receiver and the file exporter
//! (`harness/build-otel-components`): the Collector writes what it received
//! as OTLP JSON, and the log records and spans are read back exactly, with
//! their resources.
//!
//! The Collector is started a second after the export, so the export also
//! shows that a collector absent at start is retried until it comes.
//! It listens on 127.0.0.1 only, on a free port.

mod otel_components;

use std::process::{Command, Stdio};
use std::time::Duration;

use otel_components::collector::Collector;
use otel_components::{component, free_port, monotonic_now, recording, span_id, TempDir, ORDER_SERVICE_CONTAINER};
use serde_json::{json, Value as Json};
use usertrace_output::jsonl;

/// OTLP JSON attributes as (key, value) pairs: `{"stringValue": …}` and
/// friends, ints as strings as OTLP JSON writes them.
fn attributes(list: &Json) -> Vec<(String, Json)> {
    list.as_array().into_iter().flatten().map(|a| (a["key"].as_str().unwrap().to_owned(), a["value"].clone())).collect()
}

#[test]
fn logs_and_spans_arrive_in_a_collector_started_after_the_export_with_exact_attributes() {
    let Some(binary) = component("otelcol") else { return };
    let dir = TempDir::new("export-otelcol");
    let port = free_port();
    let file = dir.0.join("recording.jsonl");
    let t0 = monotonic_now() - 5_000_000_000;
    jsonl::write_file(&file, &recording(t0)).unwrap();

    let export = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["export", file.to_str().unwrap(), "--otlp", &format!("http://127.0.0.1:{port}"), "--service", "shop", "--timeout", "30"])
        .env_remove("OTEL_SERVICE_NAME")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci,team=a%2Cb")
        .env("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Absent at start: the export retries until it comes.
    std::thread::sleep(Duration::from_secs(1));
    let collector = Collector::spawn(&binary, &dir.0, port);
    let out = export.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "export failed: {stderr}");
    assert!(stderr.contains("16 events exported (8 spans, 1 log records), 0 dropped (queue full or unsent at exit), 0 failed"), "{stderr}");
    assert!(!stderr.contains("; 0 retries"), "the Collector was not up at first, so there were retries: {stderr}");

    let logs = collector.written("logs.json", 1);
    let resource_logs = logs[0]["resourceLogs"].as_array().unwrap();
    assert_eq!(resource_logs.len(), 1);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(
        attributes(&resource_logs[0]["resource"]["attributes"]),
        [
            ("service.name".into(), json!({"stringValue": "shop"})),
            ("host.name".into(), json!({"stringValue": host.trim()})),
            ("process.pid".into(), json!({"intValue": "4100"})),
            ("process.executable.name".into(), json!({"stringValue": "order-service"})),
            ("process.executable.path".into(), json!({"stringValue": "/usr/local/bin/order-service"})),
            ("process.command_line".into(), json!({"stringValue": "order-service --port 8080"})),
            ("container.id".into(), json!({"stringValue": ORDER_SERVICE_CONTAINER})),
            ("deployment.environment".into(), json!({"stringValue": "ci"})),
            ("team".into(), json!({"stringValue": "a,b"})),
        ]
    );
    let scope_logs = &resource_logs[0]["scopeLogs"][0];
    assert_eq!(scope_logs["scope"], json!({"name": "usertrace", "version": env!("CARGO_PKG_VERSION")}));
    let records = scope_logs["logRecords"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record["eventName"], "orders_cache_miss");
    assert_eq!(record["body"], json!({"stringValue": "orders_cache_miss"}));
    assert_eq!(
        attributes(&record["attributes"]),
        [
            ("key".into(), json!({"stringValue": "order:42"})),
            ("thread.id".into(), json!({"intValue": "4100"})),
            ("thread.name".into(), json!({"stringValue": "order-service"})),
        ]
    );
    assert_eq!(record["spanId"], span_id(4100, 1, 4100, t0 + 10_000, "orders_handle_request"), "inside the request");
    assert_eq!(record["timeUnixNano"], record["observedTimeUnixNano"]);

    // The spans, one resource per process.
    let traces = collector.written("traces.json", 1);
    let resource_spans: Vec<&Json> = traces.iter().flat_map(|t| t["resourceSpans"].as_array().unwrap()).collect();
    let pids: Vec<Json> = resource_spans
        .iter()
        .map(|r| attributes(&r["resource"]["attributes"]).into_iter().find(|(k, _)| k == "process.pid").unwrap().1)
        .collect();
    assert_eq!(pids, [json!({"intValue": "4100"}), json!({"intValue": "4200"}), json!({"intValue": "4300"})]);
    let spans: Vec<&Json> = resource_spans.iter().flat_map(|r| r["scopeSpans"][0]["spans"].as_array().unwrap()).collect();
    assert_eq!(spans.len(), 8);
    let charge = spans.iter().find(|s| s["name"] == "shop_charge_card").unwrap();
    let checkout = spans.iter().find(|s| s["name"] == "shop_checkout").unwrap();
    assert_eq!(charge["parentSpanId"], checkout["spanId"]);
    assert_eq!(charge["traceId"], checkout["traceId"]);
    assert_eq!(charge["kind"], 1, "INTERNAL");
    assert_eq!(
        attributes(&charge["attributes"]),
        [
            ("fee_ratio".into(), json!({"doubleValue": 0.25})),
            ("thread.id".into(), json!({"intValue": "4301"})),
            ("thread.name".into(), json!({"stringValue": "java-w4301"})),
        ]
    );
    let fetch = spans.iter().find(|s| s["name"] == "worker_fetch").unwrap();
    assert_eq!(fetch["status"], json!({"message": "TimeoutError", "code": 2}));
}

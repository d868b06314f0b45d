//! `usertrace export` against a real Jaeger (v2, built from Go modules by
//! `harness/build-otel-components`): a recording of a C service, a Python
//! worker and a Java app arrives with each process as its own service,
//! each span under its parent (CHILD_OF), with its attributes' exact
//! values and the ids derived from the recording.
//!
//! Jaeger listens on 127.0.0.1 only, on free ports. It is found at
//! `$USERTRACE_JAEGER`, else `${USERTRACE_CACHE:-$HOME/.cache/usertrace}/bin/jaeger`.
//! Without it the test says so and passes on a developer's machine, but
//! fails under CI (`CI` set), where harness/test-all builds it first.
//!
//! Jaeger v2 is an OpenTelemetry Collector distribution, so the same
//! binary also checks log records through a real Collector pipeline: its
//! OTLP receiver takes them and its `otlphttp` exporter forwards them to
//! a local capture endpoint (tiny_http), where they are decoded and
//! checked exactly. (Jaeger has no file exporter; the capture endpoint
//! only records what the Collector sent.)

mod otel_components;

use std::process::Command;
use std::time::{Duration, Instant};

use otel_components::jaeger::{get, parent, tag, Jaeger};
use otel_components::{component, monotonic_now, recording, span_id, hex, TempDir};
use serde_json::Value as Json;
use usertrace_output::{jsonl, ClockRecord, Record};

fn op<'a>(spans: &'a [Json], name: &str) -> &'a Json {
    spans.iter().find(|s| s["operationName"] == name).unwrap_or_else(|| panic!("no span {name} in {spans:#?}"))
}

#[test]
fn spans_from_c_python_and_java_arrive_with_services_parents_and_attributes() {
    let Some(binary) = component("jaeger") else { return };
    let jaeger = Jaeger::start(&binary, "export", None);
    let dir = TempDir::new("export-jaeger");
    let file = dir.0.join("recording.jsonl");
    // Recorded on a machine that has rebooted since (7,000 s after it had
    // booted, ten minutes ago): this machine's clocks say nothing about
    // those times, the clock line kept at the recording's start does.
    let t0 = 7_000_000_000_000;
    let unix_now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let started = ClockRecord { time_ns: t0 - 1_000_000, unix_ns: (unix_now - 600_000_000_000) / 1_000 * 1_000 };
    let mut records = vec![Record::Clock(started)];
    records.extend(recording(t0));
    jsonl::write_file(&file, &records).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["export", file.to_str().unwrap(), "--otlp", &format!("http://127.0.0.1:{}", jaeger.otlp_http), "--compression", "gzip"])
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-usertrace-test=1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "export failed: {stderr}");
    assert!(!stderr.contains("kept no wall-clock reading"), "{stderr}");
    assert!(stderr.contains("16 events exported (8 spans, 0 log records), 0 dropped (queue full or unsent at exit), 0 failed"), "{stderr}");
    // Jaeger takes traces, not logs.
    assert!(stderr.contains(&format!("http://127.0.0.1:{}/v1/logs answered 404", jaeger.otlp_http)), "{stderr}");

    // Jaeger stores what it received after its batch timeout.
    let deadline = Instant::now() + Duration::from_secs(20);
    let services = loop {
        let got = get(jaeger.query, "/api/services").unwrap_or(Json::Null);
        let mut services: Vec<String> = got["data"].as_array().into_iter().flatten().filter_map(|s| s.as_str().map(String::from)).collect();
        services.sort_unstable();
        if services.len() >= 3 || Instant::now() > deadline {
            break services;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(services, ["java", "order-service", "python3.11"]);

    let us = |n: u64| t0 + n * 1_000;
    // The C service: nesting on one thread, and a span ended elsewhere.
    let (c, processes) = jaeger.spans_of("order-service", 3);
    assert_eq!(c.len(), 3);
    let request = op(&c, "orders_handle_request");
    assert_eq!(request["spanID"], span_id(4100, 1, 4100, us(10), "orders_handle_request"));
    assert_eq!(parent(request), None);
    assert_eq!(request["duration"], 80, "µs");
    // Dated by the recording's own clock line: 1 ms after it, plus 10 µs.
    assert_eq!(request["startTime"], (started.unix_ns + 1_000_000) / 1_000 + 10, "µs since the epoch");
    assert_eq!(tag(request, "path"), serde_json::json!({"type": "string", "value": "/orders/42"}));
    assert_eq!(tag(request, "method"), serde_json::json!({"type": "string", "value": "GET"}));
    assert_eq!(tag(request, "thread.id"), serde_json::json!({"type": "int64", "value": 4100}));
    let query = op(&c, "orders_db_query");
    assert_eq!(parent(query).as_deref(), request["spanID"].as_str());
    assert_eq!(tag(query, "rows"), serde_json::json!({"type": "int64", "value": 3}));
    let write = op(&c, "orders_async_write");
    assert_eq!(parent(write).as_deref(), request["spanID"].as_str(), "begun inside the request");
    assert_eq!(write["duration"], 70);
    assert_eq!(tag(write, "bytes"), serde_json::json!({"type": "int64", "value": 512}));
    let process = processes.as_object().unwrap().values().next().unwrap();
    assert_eq!(process["serviceName"], "order-service");
    let ptag = |key: &str| process["tags"].as_array().unwrap().iter().find(|t| t["key"] == key).map(|t| t["value"].clone());
    assert_eq!(ptag("process.pid"), Some(serde_json::json!(4100)));
    assert_eq!(ptag("process.executable.name"), Some(serde_json::json!("order-service")));
    assert_eq!(ptag("process.executable.path"), Some(serde_json::json!("/usr/local/bin/order-service")));
    assert_eq!(ptag("process.command_line"), Some(serde_json::json!("order-service --port 8080")));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(ptag("host.name"), Some(serde_json::json!(host.trim())));

    // The Python worker: a failed child marks itself an error.
    let (py, _) = jaeger.spans_of("python3.11", 2);
    let job = op(&py, "worker_process_job");
    assert_eq!(tag(job, "job_id"), serde_json::json!({"type": "int64", "value": -7}));
    assert_eq!(tag(job, "queue"), serde_json::json!({"type": "string", "value": "default"}));
    let fetch = op(&py, "worker_fetch");
    assert_eq!(parent(fetch).as_deref(), job["spanID"].as_str());
    let tags: Vec<(String, Json)> =
        fetch["tags"].as_array().unwrap().iter().map(|t| (t["key"].as_str().unwrap().to_owned(), t["value"].clone())).collect();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        tags,
        [
            ("error".into(), serde_json::json!("TimeoutError")),
            // Jaeger's own mark of a span whose OTLP status is ERROR.
            ("error".into(), serde_json::json!(true)),
            ("otel.scope.name".into(), serde_json::json!("usertrace")),
            ("otel.scope.version".into(), serde_json::json!(version)),
            ("otel.status_code".into(), serde_json::json!("ERROR")),
            ("otel.status_description".into(), serde_json::json!("TimeoutError")),
            ("span.kind".into(), serde_json::json!("internal")),
            ("thread.id".into(), serde_json::json!(4200)),
            ("thread.name".into(), serde_json::json!("python3.11")),
        ]
    );

    // The Java app: nesting, typed values, and a GC pause on its own.
    let (java, _) = jaeger.spans_of("java", 3);
    let checkout = op(&java, "shop_checkout");
    assert_eq!(tag(checkout, "amount_cents"), serde_json::json!({"type": "int64", "value": 1299}));
    assert_eq!(tag(checkout, "approved"), serde_json::json!({"type": "bool", "value": true}));
    let charge = op(&java, "shop_charge_card");
    assert_eq!(parent(charge).as_deref(), checkout["spanID"].as_str());
    assert_eq!(charge["traceID"], checkout["traceID"]);
    assert_eq!(tag(charge, "fee_ratio"), serde_json::json!({"type": "float64", "value": 0.25}));
    let gc = op(&java, "jvm_gc_pause");
    assert_eq!(parent(gc), None);
    assert_eq!(gc["spanID"], span_id(4300, 0, 4302, us(70), "jvm_gc_pause"));
    assert_eq!(gc["duration"], 5);
    assert_eq!(tag(gc, "gc"), serde_json::json!({"type": "string", "value": "G1 Young"}));
}

/// Captures what the Collector forwards to `/v1/logs`.
struct Capture {
    server: std::sync::Arc<tiny_http::Server>,
    bodies: std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Capture {
    fn start() -> (Capture, u16) {
        let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (s, b) = (std::sync::Arc::clone(&server), std::sync::Arc::clone(&bodies));
        let thread = std::thread::spawn(move || {
            for mut request in s.incoming_requests() {
                let mut body = Vec::new();
                let _ = std::io::Read::read_to_end(request.as_reader(), &mut body);
                if request.url() == "/v1/logs" {
                    b.lock().unwrap().push(body);
                }
                let _ = request.respond(tiny_http::Response::empty(200));
            }
        });
        (Capture { server, bodies, thread: Some(thread) }, port)
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn log_records_pass_a_real_collector_with_their_attributes_and_resource() {
    use prost::Message;
    use usertrace_output::otlp::proto::collector::logs::v1::ExportLogsServiceRequest;
    use usertrace_output::otlp::proto::common::v1::{any_value::Value as Any, KeyValue};

    let Some(binary) = component("jaeger") else { return };
    let (capture, capture_port) = Capture::start();
    let jaeger = Jaeger::start(&binary, "export-logs", Some(capture_port));
    let dir = TempDir::new("export-collector");
    let file = dir.0.join("recording.jsonl");
    let t0 = monotonic_now() - 5_000_000_000;
    jsonl::write_file(&file, &recording(t0)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["export", file.to_str().unwrap(), "--otlp", &format!("http://127.0.0.1:{}", jaeger.otlp_http), "--service", "shop"])
        .env_remove("OTEL_SERVICE_NAME")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci,team=a%2Cb")
        .output()
        .unwrap();
    assert!(out.status.success(), "export failed: {}", String::from_utf8_lossy(&out.stderr));

    let deadline = Instant::now() + Duration::from_secs(20);
    let request = loop {
        if let Some(body) = capture.bodies.lock().unwrap().first() {
            break ExportLogsServiceRequest::decode(&body[..]).expect("the Collector sends OTLP protobuf");
        }
        assert!(Instant::now() < deadline, "the Collector forwarded no logs in 20 s");
        std::thread::sleep(Duration::from_millis(100));
    };
    let find = |attributes: &[KeyValue], key: &str| attributes.iter().find(|a| a.key == key).and_then(|a| a.value.clone()?.value);
    assert_eq!(request.resource_logs.len(), 1, "{request:#?}");
    let resource = request.resource_logs[0].resource.as_ref().unwrap();
    let r = &resource.attributes;
    assert_eq!(find(r, "service.name"), Some(Any::StringValue("shop".into())));
    assert_eq!(find(r, "process.pid"), Some(Any::IntValue(4100)));
    assert_eq!(find(r, "process.executable.name"), Some(Any::StringValue("order-service".into())));
    assert_eq!(find(r, "process.command_line"), Some(Any::StringValue("order-service --port 8080".into())));
    assert_eq!(find(r, "deployment.environment"), Some(Any::StringValue("ci".into())));
    assert_eq!(find(r, "team"), Some(Any::StringValue("a,b".into())));
    let scope = &request.resource_logs[0].scope_logs[0];
    assert_eq!(scope.scope.as_ref().unwrap().name, "usertrace");
    assert_eq!(scope.log_records.len(), 1);
    let log = &scope.log_records[0];
    assert_eq!(log.event_name, "orders_cache_miss");
    assert_eq!(log.body.clone().and_then(|b| b.value), Some(Any::StringValue("orders_cache_miss".into())));
    assert_eq!(find(&log.attributes, "key"), Some(Any::StringValue("order:42".into())));
    assert_eq!(find(&log.attributes, "thread.id"), Some(Any::IntValue(4100)));
    assert_eq!(find(&log.attributes, "thread.name"), Some(Any::StringValue("order-service".into())));
    // Inside the request span, so in its trace.
    assert_eq!(hex(&log.span_id), span_id(4100, 1, 4100, t0 + 10_000, "orders_handle_request"));
    let unix_now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let age = unix_now - log.time_unix_nano;
    assert!((4_000_000_000..60_000_000_000).contains(&age), "the log's time is {age} ns ago, not about 5 s");
}

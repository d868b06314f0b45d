//! A real Jaeger (v2) for the OTLP tests, and the reads of its query API
//! they check spans with. Host and kernel tests alike start it here, so
//! that its configuration and the meaning of a "parent" live in one place.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::KeyValue as Attribute;
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::{json, Value as Json};

use super::{free_port, TempDir};

/// A Jaeger process, killed when dropped.
pub struct Jaeger {
    child: Child,
    pub otlp_http: u16,
    pub query: u16,
    dir: TempDir,
}

impl Drop for Jaeger {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Jaeger {
    /// Jaeger with in-memory storage, OTLP/HTTP and the query API only,
    /// every listener on 127.0.0.1 and a free port; ready when it returns.
    /// With `logs_to`, a logs pipeline forwards log records there (Jaeger
    /// is a Collector distribution: its `otlphttp` exporter does it).
    pub fn start(binary: &Path, name: &str, logs_to: Option<u16>) -> Jaeger {
        let dir = TempDir::new(&format!("{name}-jaeger"));
        let (logs_pipeline, logs_exporter) = match logs_to {
            Some(port) => (
                "\n    logs:\n      receivers: [otlp]\n      exporters: [otlphttp/capture]".to_owned(),
                format!("\n  otlphttp/capture:\n    endpoint: http://127.0.0.1:{port}\n    compression: none\n    retry_on_failure:\n      enabled: false"),
            ),
            None => (String::new(), String::new()),
        };
        let (otlp_http, query, query_grpc) = (free_port(), free_port(), free_port());
        let config = format!(
            r#"
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]{logs_pipeline}
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
    trace_storage: memstore{logs_exporter}
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
        // while to come up; nothing may be sent before it listens.
        let deadline = Instant::now() + Duration::from_secs(300);
        while get(query, "/api/services").is_none() {
            if let Ok(Some(status)) = jaeger.child.try_wait() {
                panic!("jaeger exited with {status}:\n{}", jaeger.log());
            }
            assert!(Instant::now() < deadline, "jaeger's query API did not come up in 300 s:\n{}", jaeger.log());
            std::thread::sleep(Duration::from_millis(200));
        }
        jaeger
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.0.join("jaeger.log")).unwrap_or_default()
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.otlp_http)
    }

    /// The spans of `service`'s traces, and the traces' processes, once
    /// `expected` of them are stored.
    pub fn spans_of(&self, service: &str, expected: usize) -> (Vec<Json>, Json) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = get(self.query, &format!("/api/traces?service={service}&lookback=1h&limit=1000"));
            if let Some(got) = got {
                let traces = got["data"].as_array().cloned().unwrap_or_default();
                let spans: Vec<Json> = traces.iter().flat_map(|t| t["spans"].as_array().cloned().unwrap_or_default()).collect();
                if spans.len() >= expected {
                    let processes = traces.first().map(|t| t["processes"].clone()).unwrap_or(Json::Null);
                    return (spans, processes);
                }
            }
            let services = get(self.query, "/api/services").unwrap_or(Json::Null);
            assert!(Instant::now() < deadline, "{service}: fewer than {expected} spans arrived in 60 s; services: {services}");
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The spans of the trace `id` (32 hex digits) and the trace's
    /// processes, once `expected` spans of it are stored.
    pub fn trace(&self, id: &str, expected: usize) -> (Vec<Json>, Json) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            // Unknown yet, the trace is a 404: None, like a query API not up.
            let got = get(self.query, &format!("/api/traces/{id}")).unwrap_or(Json::Null);
            let trace = &got["data"][0];
            let spans = trace["spans"].as_array().cloned().unwrap_or_default();
            if spans.len() >= expected {
                return (spans, trace["processes"].clone());
            }
            let services = get(self.query, "/api/services").unwrap_or(Json::Null);
            assert!(Instant::now() < deadline, "trace {id}: {} of {expected} spans arrived in 60 s; services {services}, spans {spans:#?}", spans.len());
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Every span whose name starts with `prefix`, of every service, each
    /// with its process (`serviceName` and tags), once `expected` of them
    /// are stored.
    pub fn spans_named(&self, prefix: &str, expected: usize) -> Vec<(Json, Json)> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let services = get(self.query, "/api/services").unwrap_or(Json::Null);
            let mut spans = Vec::new();
            for service in services["data"].as_array().into_iter().flatten().filter_map(Json::as_str) {
                let got = get(self.query, &format!("/api/traces?service={service}&lookback=1h&limit=1000")).unwrap_or(Json::Null);
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
}

/// GET on the query API, as JSON; `None` while it is not answering.
pub fn get(port: u16, path: &str) -> Option<Json> {
    let mut response = ureq::get(&format!("http://127.0.0.1:{port}{path}")).call().ok()?;
    serde_json::from_str(&response.body_mut().read_to_string().ok()?).ok()
}

/// A span's attribute `key` as Jaeger shows it: `{"type", "value"}`, or
/// null when the span has none.
pub fn tag(span: &Json, key: &str) -> Json {
    let tags = span["tags"].as_array().unwrap_or_else(|| panic!("no tags: {span}"));
    tags.iter().find(|t| t["key"] == key).map(|t| json!({"type": t["type"], "value": t["value"]})).unwrap_or(Json::Null)
}

/// The span id of a span's parent (its CHILD_OF reference), which must be
/// in the same trace.
pub fn parent(span: &Json) -> Option<String> {
    let refs = span["references"].as_array()?;
    let r = refs.iter().find(|r| r["refType"] == "CHILD_OF")?;
    assert_eq!(r["traceID"], span["traceID"], "a parent in another trace");
    Some(r["spanID"].as_str()?.to_owned())
}

/// A resource attribute of a span's process, as its bare value.
pub fn process_tag(process: &Json, key: &str) -> Json {
    let tags = process["tags"].as_array().unwrap_or_else(|| panic!("no process tags: {process}"));
    tags.iter().find(|t| t["key"] == key).map(|t| t["value"].clone()).unwrap_or(Json::Null)
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A span's trace id from Jaeger, which leaves out leading zeros.
pub fn trace_id(span: &Json) -> String {
    format!("{:0>32}", span["traceID"].as_str().unwrap())
}

/// What Jaeger shows of an OTLP span, by the rules of its OTLP
/// translation: times in microseconds; attributes as typed tags, beside
/// the kind, the status and the scope; events as logs, their name as the
/// field `event`; the parent and the links as references (a link's
/// attributes are not kept).
pub fn as_jaeger_shows(span: &Span, scope: &str, version: &str) -> Json {
    let mut shown = tags(&span.attributes);
    let kind = ["", "", "server", "client", "producer", "consumer"][span.kind as usize];
    let status = span.status.clone().unwrap_or_default();
    for (key, value, present) in [
        ("span.kind", json!(kind), !kind.is_empty()),
        ("otel.status_code", json!(["", "OK", "ERROR"][status.code as usize]), status.code != 0),
        ("otel.status_description", json!(status.message), !status.message.is_empty()),
        ("error", json!(true), status.code == 2),
        ("otel.scope.name", json!(scope), !scope.is_empty()),
        ("otel.scope.version", json!(version), !version.is_empty()),
        ("w3c.tracestate", json!(span.trace_state), !span.trace_state.is_empty()),
    ] {
        if present {
            let kind = if value.is_boolean() { "bool" } else { "string" };
            shown.push(json!({"key": key, "type": kind, "value": value}));
        }
    }
    let logs: Vec<Json> = span
        .events
        .iter()
        .map(|e| {
            let mut fields = tags(&e.attributes);
            fields.push(json!({"key": "event", "type": "string", "value": e.name}));
            json!({"timestamp": e.time_unix_nano / 1000, "fields": sorted(fields)})
        })
        .collect();
    let trace = hex(&span.trace_id);
    let mut references: Vec<Json> = span.links.iter().map(|l| json!({"refType": "FOLLOWS_FROM", "traceID": hex(&l.trace_id), "spanID": hex(&l.span_id)})).collect();
    if !span.parent_span_id.is_empty() {
        references.push(json!({"refType": "CHILD_OF", "traceID": trace, "spanID": hex(&span.parent_span_id)}));
    }
    json!({
        "traceID": trace, "spanID": hex(&span.span_id), "operationName": span.name,
        "startTime": span.start_time_unix_nano / 1000, "duration": (span.end_time_unix_nano - span.start_time_unix_nano) / 1000,
        "tags": sorted(shown), "logs": logs, "references": sorted(references),
    })
}

/// The same parts of a span that Jaeger has, in the same order.
pub fn as_jaeger_has_it(span: &Json) -> Json {
    let list = |k: &str| span[k].as_array().cloned().unwrap_or_default();
    let logs: Vec<Json> = list("logs").into_iter().map(|l| json!({"timestamp": l["timestamp"], "fields": sorted(l["fields"].as_array().cloned().unwrap_or_default())})).collect();
    let references: Vec<Json> = list("references")
        .into_iter()
        .map(|r| json!({"refType": r["refType"], "traceID": format!("{:0>32}", r["traceID"].as_str().unwrap()), "spanID": r["spanID"]}))
        .collect();
    json!({
        "traceID": trace_id(span), "spanID": span["spanID"], "operationName": span["operationName"],
        "startTime": span["startTime"], "duration": span["duration"],
        "tags": sorted(list("tags")), "logs": logs, "references": sorted(references),
    })
}

/// OTLP attributes as Jaeger's typed tags.
fn tags(attributes: &[Attribute]) -> Vec<Json> {
    attributes
        .iter()
        .map(|a| {
            let (kind, value) = match a.value.as_ref().and_then(|v| v.value.clone()) {
                Some(Any::StringValue(s)) => ("string", json!(s)),
                Some(Any::IntValue(i)) => ("int64", json!(i)),
                Some(Any::DoubleValue(d)) => ("float64", json!(d)),
                Some(Any::BoolValue(b)) => ("bool", json!(b)),
                other => panic!("{}: no attribute of this kind is expected here: {other:?}", a.key),
            };
            json!({"key": a.key, "type": kind, "value": value})
        })
        .collect()
}

fn sorted(mut items: Vec<Json>) -> Vec<Json> {
    items.sort_by_key(|j| j.to_string());
    items
}

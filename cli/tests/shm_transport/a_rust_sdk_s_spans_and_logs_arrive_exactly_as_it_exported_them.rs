//! A program instrumented with OpenTelemetry's Rust SDK, sampled by
//! usertrace's sampler, exports through `usertrace-opentelemetry`, beside an exporter that keeps what the SDK
//! exported. One `usertrace record --otlp` sends the spans on; the OTLP
//! requests that arrive hold exactly those spans, protobuf for protobuf
//! (attributes, events, links, kind, status, tracestate, flags), under
//! the SDK's scope: a span with a 20 KiB attribute and one with 200
//! attributes among them, whole. Likewise its log records, one of them
//! with a 20 KiB body, with the ids of the span they were emitted in.
//! Both under the Resource the program built in code (no
//! `OTEL_SERVICE_NAME` in its environment): its attributes exactly, then
//! only what the recorder adds of its own (the pid, the executable).
//!
//! The program is this test binary, run again as the ignored test
//! `the_program`; the endpoint is a local stub that keeps each request's
//! body, so the comparison is of the very bytes sent.

use std::io::Read;
use std::process::Command;
use std::sync::{Arc, Mutex};

use opentelemetry::logs::{LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry::trace::{Link, SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter, SdkLoggerProvider};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use prost::Message;

use crate::support::usertrace;

const PROVIDER_ENV: &str = "UT_OTEL_RUST_PROVIDER";
const SPANS_ENV: &str = "UT_OTEL_RUST_SPANS";
const LOGS_ENV: &str = "UT_OTEL_RUST_LOGS";
const RESOURCE_ENV: &str = "UT_OTEL_RUST_RESOURCE";

/// The resource attributes the recorder adds of its own after an SDK's
/// (and `linux.namespace.*`, where it can see them).
pub(crate) const RECORDER_KEYS: [&str; 7] =
    ["host.name", "process.pid", "process.executable.name", "process.executable.path", "process.command_line", "container.id", "k8s.pod.uid"];

/// The Resource the program builds in code: a service name and a custom
/// attribute, besides what the SDK detects (telemetry.sdk.*).
pub(crate) fn resource_built_in_code() -> opentelemetry_sdk::Resource {
    opentelemetry_sdk::Resource::builder()
        .with_service_name("checkout-rs")
        .with_attribute(KeyValue::new("deployment.tier", "canary"))
        .with_attribute(KeyValue::new("checkout.shard", 7))
        .build()
}

/// The attributes of the resource the SDK handed its exporters.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeptResource(pub(crate) Arc<Mutex<Vec<opentelemetry_proto::tonic::common::v1::KeyValue>>>);

impl KeptResource {
    pub(crate) fn set(&self, resource: &opentelemetry_sdk::Resource) {
        use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
        *self.0.lock().unwrap() = ResourceAttributesWithSchema::from(resource).attributes.0;
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let attributes = self.0.lock().unwrap().clone();
        opentelemetry_proto::tonic::resource::v1::Resource { attributes, ..Default::default() }.encode_to_vec()
    }
}

/// Asserts that `resource` is the SDK's (`sdk`), exactly, followed only by
/// the recorder's own attributes, `process.pid` being `pid` if given.
pub(crate) fn assert_the_sdk_s_resource(resource: Option<&opentelemetry_proto::tonic::resource::v1::Resource>, sdk: &opentelemetry_proto::tonic::resource::v1::Resource, pid: Option<u32>) {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    let resource = resource.expect("a resource");
    let n = sdk.attributes.len();
    assert!(resource.attributes.len() >= n, "{resource:#?}");
    assert_eq!(resource.attributes[..n], sdk.attributes[..], "the SDK's attributes, exactly and first");
    let rest: Vec<&str> = resource.attributes[n..].iter().map(|a| a.key.as_str()).collect();
    let recorders = |k: &&str| RECORDER_KEYS.contains(k) || k.starts_with("linux.namespace.");
    assert!(rest.iter().all(recorders), "then only the recorder's own: {rest:?}");
    assert!(rest.contains(&"process.pid"), "{rest:?}");
    if let Some(pid) = pid {
        let at = resource.attributes.iter().find(|a| a.key == "process.pid").and_then(|a| a.value.clone()?.value);
        assert_eq!(at, Some(Any::IntValue(i64::from(pid))));
    }
}

/// Keeps what the SDK exported, as OTLP spans with their scope's name
/// (the four-service chain's Rust service keeps its spans with it too).
#[derive(Debug, Clone, Default)]
pub(crate) struct Kept(pub(crate) Arc<Mutex<Vec<(Span, String)>>>, KeptResource);

impl SpanExporter for Kept {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let mut kept = self.0.lock().unwrap();
        kept.extend(batch.into_iter().map(|s| {
            let scope = s.instrumentation_scope.name().to_owned();
            (Span::from(s), scope)
        }));
        Ok(())
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.1.set(resource);
    }
}

/// Keeps what the SDK's logger exported, as OTLP log records with their
/// scope's name.
#[derive(Debug, Clone, Default)]
struct KeptLogs(Arc<Mutex<Vec<(LogRecord, String)>>>);

impl LogExporter for KeptLogs {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        let mut kept = self.0.lock().unwrap();
        kept.extend(batch.iter().map(|(r, scope)| (LogRecord::from(r), scope.name().to_owned())));
        Ok(())
    }
}

/// The instrumented program (run by the test below, under `record`).
#[test]
#[ignore = "the program the next test records"]
fn the_program() {
    let provider_name = std::env::var(PROVIDER_ENV).unwrap();
    let kept = Kept::default();
    let exporter = usertrace_opentelemetry::UsertraceSpanExporter::new(&provider_name).unwrap();
    // The usertrace sampler: while the recorder listens, it records.
    let provider = SdkTracerProvider::builder()
        .with_resource(resource_built_in_code())
        .with_max_attributes_per_span(256)
        .with_sampler(exporter.sampler())
        .with_simple_exporter(exporter)
        .with_simple_exporter(kept.clone())
        .build();
    let kept_logs = KeptLogs::default();
    let loggers = SdkLoggerProvider::builder()
        .with_resource(resource_built_in_code())
        .with_simple_exporter(usertrace_opentelemetry::UsertraceLogExporter::new(&provider_name).unwrap())
        .with_simple_exporter(kept_logs.clone())
        .build();
    let logger = loggers.logger("checkout.log");
    let tracer = provider.tracer("checkout");
    tracer.in_span("GET /cart", |cx: Context| {
        for body in ["cart loaded".to_owned(), "y".repeat(20 * 1024)] {
            let mut record = logger.create_log_record();
            record.set_body(body.into());
            record.set_severity_number(Severity::Warn);
            record.add_attribute("cart.items", 3);
            logger.emit(record);
        }
        let elsewhere = cx.span().span_context().clone();
        let mut call = tracer.span_builder("call inventory").with_kind(SpanKind::Client).with_links(vec![Link::with_context(elsewhere)]).start(&tracer);
        use opentelemetry::trace::Span as _;
        call.set_attribute(KeyValue::new("payload", "x".repeat(20 * 1024)));
        call.add_event("retry", vec![KeyValue::new("attempt", 2)]);
        call.set_status(Status::error("inventory down"));
        call.end();
        let mut wide = tracer.start("wide");
        for i in 0..200 {
            wide.set_attribute(KeyValue::new(format!("attr.{i:03}"), i64::from(i)));
        }
        wide.end();
    });
    provider.shutdown().unwrap();
    loggers.shutdown().unwrap();
    let spans: Vec<u8> = kept.0.lock().unwrap().iter().flat_map(|(s, scope)| frame(&s.encode_to_vec(), scope)).collect();
    std::fs::write(std::env::var(SPANS_ENV).unwrap(), spans).unwrap();
    let logs: Vec<u8> = kept_logs.0.lock().unwrap().iter().flat_map(|(r, scope)| frame(&r.encode_to_vec(), scope)).collect();
    std::fs::write(std::env::var(LOGS_ENV).unwrap(), logs).unwrap();
    std::fs::write(std::env::var(RESOURCE_ENV).unwrap(), kept.1.encode()).unwrap();
}

/// A message and its scope's name, each length-prefixed.
pub(crate) fn frame(message: &[u8], scope: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for bytes in [message, scope.as_bytes()] {
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

pub(crate) fn unframe<M: Message + Default>(mut bytes: &[u8]) -> Vec<(M, String)> {
    fn next<'a>(bytes: &mut &'a [u8]) -> &'a [u8] {
        let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
        let (item, rest) = bytes[4..].split_at(len);
        *bytes = rest;
        item
    }
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let message = M::decode(next(&mut bytes)).unwrap();
        out.push((message, String::from_utf8(next(&mut bytes).to_vec()).unwrap()));
    }
    out
}

/// What the endpoint received.
#[derive(Default)]
pub(crate) struct Received {
    pub(crate) traces: Vec<ExportTraceServiceRequest>,
    pub(crate) logs: Vec<ExportLogsServiceRequest>,
}

/// An OTLP/HTTP endpoint that keeps every request's body.
pub(crate) fn endpoint() -> (String, Arc<Mutex<Received>>, Arc<tiny_http::Server>) {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    let received = Arc::new(Mutex::new(Received::default()));
    let (s, r) = (Arc::clone(&server), Arc::clone(&received));
    std::thread::spawn(move || {
        for mut request in s.incoming_requests() {
            let mut body = Vec::new();
            request.as_reader().read_to_end(&mut body).unwrap();
            let gzip = request.headers().iter().any(|h| h.field.equiv("Content-Encoding") && h.value.as_str() == "gzip");
            if gzip {
                let mut plain = Vec::new();
                flate2::read::GzDecoder::new(body.as_slice()).read_to_end(&mut plain).unwrap();
                body = plain;
            }
            if request.url().ends_with("/v1/traces") {
                r.lock().unwrap().traces.push(ExportTraceServiceRequest::decode(body.as_slice()).unwrap());
            } else if request.url().ends_with("/v1/logs") {
                r.lock().unwrap().logs.push(ExportLogsServiceRequest::decode(body.as_slice()).unwrap());
            }
            let _ = request.respond(tiny_http::Response::empty(200));
        }
    });
    (url, received, server)
}

#[test]
fn a_rust_sdk_s_spans_and_logs_arrive_exactly_as_it_exported_them() {
    let provider = format!("utotelrs{}", std::process::id());
    let spans_file = std::env::temp_dir().join(format!("{provider}.spans"));
    let logs_file = std::env::temp_dir().join(format!("{provider}.logs"));
    let resource_file = std::env::temp_dir().join(format!("{provider}.resource"));
    let (url, received, server) = endpoint();
    let test = concat!(module_path!(), "::the_program").split_once("::").unwrap().1;
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{provider}_*"), "--otlp", &url, "--"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", test, "--ignored", "--nocapture"])
        .env(PROVIDER_ENV, &provider)
        .env(SPANS_ENV, &spans_file)
        .env(LOGS_ENV, &logs_file)
        .env(RESOURCE_ENV, &resource_file)
        // The service is named by the Resource built in code alone.
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let exported: Vec<(Span, String)> = unframe(&std::fs::read(&spans_file).unwrap());
    let exported_logs: Vec<(LogRecord, String)> = unframe(&std::fs::read(&logs_file).unwrap());
    let _ = std::fs::remove_file(&spans_file);
    let sdk_resource = opentelemetry_proto::tonic::resource::v1::Resource::decode(std::fs::read(&resource_file).unwrap().as_slice()).unwrap();
    let _ = std::fs::remove_file(&logs_file);
    let _ = std::fs::remove_file(&resource_file);
    server.unblock();
    let sdk_keys: Vec<&str> = sdk_resource.attributes.iter().map(|a| a.key.as_str()).collect();
    for key in ["service.name", "deployment.tier", "checkout.shard", "telemetry.sdk.name"] {
        assert!(sdk_keys.contains(&key), "{sdk_keys:?}");
    }
    assert_eq!(exported.iter().map(|(s, _)| s.name.as_str()).collect::<Vec<_>>(), ["call inventory", "wide", "GET /cart"]);
    assert_eq!((exported[0].0.attributes[0].key.as_str(), exported[1].0.attributes.len()), ("payload", 200));
    let received = received.lock().unwrap();
    for resource_spans in received.traces.iter().flat_map(|r| &r.resource_spans) {
        assert_the_sdk_s_resource(resource_spans.resource.as_ref(), &sdk_resource, None);
    }
    for resource_logs in received.logs.iter().flat_map(|r| &r.resource_logs) {
        assert_the_sdk_s_resource(resource_logs.resource.as_ref(), &sdk_resource, None);
    }
    let arrived: Vec<(Span, String)> = received
        .traces
        .iter()
        .flat_map(|r| &r.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| s.spans.iter().map(|span| (span.clone(), s.scope.as_ref().map(|c| c.name.clone()).unwrap_or_default())))
        .collect();
    assert_eq!(arrived.len(), exported.len(), "{stderr}");
    for (span, scope) in &exported {
        let got = arrived.iter().find(|(a, _)| a.span_id == span.span_id).unwrap_or_else(|| panic!("{} did not arrive", span.name));
        assert_eq!(got, &(span.clone(), scope.clone()), "{}", span.name);
    }
    let arrived_logs: Vec<(LogRecord, String)> = received
        .logs
        .iter()
        .flat_map(|r| &r.resource_logs)
        .flat_map(|r| &r.scope_logs)
        .flat_map(|s| s.log_records.iter().map(|l| (l.clone(), s.scope.as_ref().map(|c| c.name.clone()).unwrap_or_default())))
        .collect();
    assert_eq!(exported_logs.len(), 2);
    assert_eq!(exported_logs[0].0.span_id, exported[2].0.span_id, "emitted in GET /cart");
    assert_eq!(arrived_logs, exported_logs);
}

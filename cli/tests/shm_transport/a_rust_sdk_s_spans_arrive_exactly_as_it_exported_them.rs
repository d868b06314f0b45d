//! A program instrumented with OpenTelemetry's Rust SDK exports through
//! `usertrace-opentelemetry`, beside an exporter that keeps what the SDK
//! exported. One `usertrace record --otlp` sends the spans on; the OTLP
//! requests that arrive hold exactly those spans, protobuf for protobuf
//! (attributes, events, links, kind, status, tracestate, flags), under
//! the SDK's scope: a span with a 20 KiB attribute and one with 200
//! attributes among them, whole.
//!
//! The program is this test binary, run again as the ignored test
//! `the_program`; the endpoint is a local stub that keeps each request's
//! body, so the comparison is of the very bytes sent.

use std::io::Read;
use std::process::Command;
use std::sync::{Arc, Mutex};

use opentelemetry::trace::{Link, SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use prost::Message;

use crate::support::usertrace;

const PROVIDER_ENV: &str = "UT_OTEL_RUST_PROVIDER";
const SPANS_ENV: &str = "UT_OTEL_RUST_SPANS";

/// Keeps what the SDK exported, as OTLP spans with their scope's name.
#[derive(Debug, Clone, Default)]
struct Kept(Arc<Mutex<Vec<(Span, String)>>>);

impl SpanExporter for Kept {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let mut kept = self.0.lock().unwrap();
        kept.extend(batch.into_iter().map(|s| {
            let scope = s.instrumentation_scope.name().to_owned();
            (Span::from(s), scope)
        }));
        Ok(())
    }
}

/// The instrumented program (run by the test below, under `record`).
#[test]
#[ignore = "the program the next test records"]
fn the_program() {
    let provider_name = std::env::var(PROVIDER_ENV).unwrap();
    let kept = Kept::default();
    let provider = SdkTracerProvider::builder()
        .with_max_attributes_per_span(256)
        .with_simple_exporter(usertrace_opentelemetry::UsertraceSpanExporter::new(&provider_name).unwrap())
        .with_simple_exporter(kept.clone())
        .build();
    let tracer = provider.tracer("checkout");
    tracer.in_span("GET /cart", |cx: Context| {
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
    let spans: Vec<u8> = kept.0.lock().unwrap().iter().flat_map(|(s, scope)| frame(s, scope)).collect();
    std::fs::write(std::env::var(SPANS_ENV).unwrap(), spans).unwrap();
}

/// A span and its scope's name, each length-prefixed.
fn frame(span: &Span, scope: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for bytes in [span.encode_to_vec(), scope.as_bytes().to_vec()] {
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(&bytes);
    }
    out
}

fn unframe(mut bytes: &[u8]) -> Vec<(Span, String)> {
    fn next<'a>(bytes: &mut &'a [u8]) -> &'a [u8] {
        let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
        let (item, rest) = bytes[4..].split_at(len);
        *bytes = rest;
        item
    }
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let span = Span::decode(next(&mut bytes)).unwrap();
        out.push((span, String::from_utf8(next(&mut bytes).to_vec()).unwrap()));
    }
    out
}

/// An OTLP/HTTP endpoint that keeps the body of every request to /v1/traces.
fn endpoint() -> (String, Arc<Mutex<Vec<ExportTraceServiceRequest>>>, Arc<tiny_http::Server>) {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
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
                r.lock().unwrap().push(ExportTraceServiceRequest::decode(body.as_slice()).unwrap());
            }
            let _ = request.respond(tiny_http::Response::empty(200));
        }
    });
    (url, received, server)
}

#[test]
fn a_rust_sdk_s_spans_arrive_exactly_as_it_exported_them() {
    let provider = format!("utotelrs{}", std::process::id());
    let spans_file = std::env::temp_dir().join(format!("{provider}.spans"));
    let (url, received, server) = endpoint();
    let test = concat!(module_path!(), "::the_program").split_once("::").unwrap().1;
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{provider}_*"), "--otlp", &url, "--"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", test, "--ignored", "--nocapture"])
        .env(PROVIDER_ENV, &provider)
        .env(SPANS_ENV, &spans_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let exported = unframe(&std::fs::read(&spans_file).unwrap());
    let _ = std::fs::remove_file(&spans_file);
    server.unblock();
    assert_eq!(exported.iter().map(|(s, _)| s.name.as_str()).collect::<Vec<_>>(), ["call inventory", "wide", "GET /cart"]);
    assert_eq!((exported[0].0.attributes[0].key.as_str(), exported[1].0.attributes.len()), ("payload", 200));
    let arrived: Vec<(Span, String)> = received
        .lock()
        .unwrap()
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
}

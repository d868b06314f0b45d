//! Requests whose traces cross two processes, through the OpenTelemetry
//! SDK and its user_events trace exporter, for the CLI's tail-based export
//! test.
//!
//! `otel_requests_producer N SLOW FAILED` is the frontend: it starts the
//! same program as its backend (`otel_requests_producer backend`, over a
//! pipe), then runs N requests. Request `i` is the span `request`
//! (attribute `request` = i) holding `call_backend`, which hands the trace
//! context to the backend as W3C ids on one line; the backend runs
//! `handle` as the remote child of `call_backend`. `handle` sleeps 2 ms,
//! but 500 ms for request SLOW, and ends with an Error status ("card
//! declined") for request FAILED. The frontend prints `trace I TRACE_ID`
//! for each request on stdout. Both processes wait (up to 60 s) for a
//! recorder to enable the tracepoint `UsertraceOtelTraces_L4K1` first.
//! Exit status 0, or 2 if nobody enabled it in time.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use eventheader_dynamic as ehd;
use opentelemetry::trace::{Span, SpanContext, Status, TraceContextExt, TraceFlags, TraceId, TraceState, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue, SpanId};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_user_events_trace::Processor;

const PROVIDER: &str = "UsertraceOtelTraces";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let processor = Processor::builder(PROVIDER).build().expect("the user_events processor");
    let provider = SdkTracerProvider::builder().with_span_processor(processor).build();
    let tracer = provider.tracer("usertrace-test");
    let mut probe = wait_for_recorder();
    if args.get(1).map(String::as_str) == Some("backend") {
        backend(&tracer);
    } else {
        let number = |i: usize| args.get(i).and_then(|a| a.parse::<u64>().ok()).expect("usage: otel_requests_producer N SLOW FAILED");
        frontend(&tracer, number(1), number(2), number(3));
    }
    provider.shutdown().expect("tracer provider shutdown");
    probe.unregister();
}

/// The exporter drops spans while nobody listens and says nothing. Its
/// tracepoint's enable bit is shared by every registration of the same
/// name, so a registration of our own tells when a recorder is there.
fn wait_for_recorder() -> ehd::Provider {
    let mut probe = ehd::Provider::new(PROVIDER, &ehd::Provider::new_options());
    let set = probe.register_set(ehd::Level::Informational, 1);
    assert_eq!(set.errno(), 0, "registering {PROVIDER}_L4K1");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !set.enabled() {
        if Instant::now() > deadline {
            eprintln!("otel_requests_producer: nobody enabled {PROVIDER}_L4K1 in 60 s");
            std::process::exit(2);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    probe
}

fn frontend(tracer: &impl Tracer<Span: Send + Sync + 'static>, requests: u64, slow: u64, failed: u64) {
    let exe = std::env::current_exe().expect("the program's own path");
    let mut backend = Command::new(exe).arg("backend").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("starting the backend");
    let mut to_backend = backend.stdin.take().unwrap();
    let mut from_backend = BufReader::new(backend.stdout.take().unwrap());
    for i in 0..requests {
        tracer.in_span("request", |cx| {
            cx.span().set_attribute(KeyValue::new("request", i as i64));
            println!("trace {i} {}", cx.span().span_context().trace_id());
            tracer.in_span("call_backend", |cx| {
                let sc = cx.span().span_context().clone();
                let sleep_ms = if i == slow { 500 } else { 2 };
                writeln!(to_backend, "{} {} {sleep_ms} {}", sc.trace_id(), sc.span_id(), u8::from(i == failed)).unwrap();
                let mut reply = String::new();
                from_backend.read_line(&mut reply).unwrap();
                assert_eq!(reply.trim(), "done", "the backend's reply");
            });
        });
    }
    std::io::stdout().flush().unwrap();
    drop(to_backend);
    let status = backend.wait().expect("waiting for the backend");
    assert!(status.success(), "the backend: {status}");
}

fn backend(tracer: &impl Tracer) {
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [trace_id, span_id, sleep_ms, fail] = parts[..] else { panic!("a request line: {line}") };
        let parent = SpanContext::new(
            TraceId::from_hex(trace_id).unwrap(),
            SpanId::from_hex(span_id).unwrap(),
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        let cx = Context::new().with_remote_span_context(parent);
        let mut span = tracer.start_with_context("handle", &cx);
        std::thread::sleep(Duration::from_millis(sleep_ms.parse().unwrap()));
        if fail == "1" {
            span.set_status(Status::error("card declined"));
        }
        span.end();
        writeln!(out, "done").unwrap();
        out.flush().unwrap();
    }
}

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::SystemTime;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::trace::{SpanEvents, SpanLinks};

use super::*;

/// The export future never waits: it is ready at its first poll.
fn ready<T>(future: impl Future<Output = T>) -> T {
    match pin!(future).as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("an export waited"),
    }
}

fn exporter(test: &str) -> UsertraceSpanExporter {
    UsertraceSpanExporter::new(&format!("utotel{}_{test}", std::process::id())).expect("the events register (through shared memory here)")
}

fn span() -> SpanData {
    let context = SpanContext::new(TraceId::from(7u128), SpanId::from(9u64), TraceFlags::SAMPLED, false, TraceState::default());
    SpanData {
        span_context: context,
        parent_span_id: SpanId::INVALID,
        parent_span_is_remote: false,
        span_kind: SpanKind::Server,
        name: "GET /".into(),
        start_time: SystemTime::now(),
        end_time: SystemTime::now(),
        attributes: vec![opentelemetry::KeyValue::new("payload", "x".repeat(20 * 1024))],
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status: Status::Ok,
        instrumentation_scope: InstrumentationScope::builder("test").build(),
    }
}

#[test]
fn while_nobody_listens_a_batch_writes_nothing_and_succeeds() {
    let exporter = exporter("idle");
    assert!(!exporter.enabled());
    assert!(ready(exporter.export(vec![span(), span()])).is_ok());
    assert_eq!(exporter.dropped(), 0);
}

#[test]
fn force_flush_returns_at_once_and_exports_after_shutdown_fail() {
    let exporter = exporter("shutdown");
    assert!(exporter.force_flush().is_ok());
    assert!(exporter.shutdown().is_ok());
    assert!(matches!(ready(exporter.export(vec![span()])), Err(OTelSdkError::AlreadyShutdown)));
}

#[test]
fn a_bad_provider_name_is_the_cores_named_error() {
    let err = UsertraceSpanExporter::new("no spaces allowed").unwrap_err();
    assert_eq!(err.kind(), usertrace::ErrorKind::InvalidName, "{err}");
}

#[test]
fn the_readable_status_code_is_the_sdks_in_otlp_numbers() {
    let code = |status: Status| status_code(&OtlpSpan::from(SpanData { status, ..span() }));
    assert_eq!(code(Status::Unset), 0);
    assert_eq!(code(Status::Ok), 1);
    assert_eq!(code(Status::error("card declined")), 2);
}

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceState, TracerProvider, Tracer};
use opentelemetry_sdk::trace::SdkTracerProvider;

use super::*;
use crate::UsertraceSpanExporter;

#[test]
fn while_nobody_listens_a_span_is_not_recorded_and_its_context_propagates() {
    let exporter = UsertraceSpanExporter::new(&format!("utotelsampler{}", std::process::id())).expect("the events register");
    let sampler = exporter.sampler();
    let state = TraceState::from_key_value([("vendor", "x")]).unwrap();
    let remote = SpanContext::new(TraceId::from(0x4bf9_u128), SpanId::from(0xf067_u64), TraceFlags::SAMPLED, true, state.clone());
    let parent = Context::new().with_remote_span_context(remote);
    let result = sampler.should_sample(Some(&parent), TraceId::from(0x4bf9_u128), "GET /", &SpanKind::Server, &[], &[]);
    assert_eq!((result.decision, result.trace_state), (SamplingDecision::Drop, state));

    let provider = SdkTracerProvider::builder().with_sampler(sampler).with_simple_exporter(exporter).build();
    let span = provider.tracer("t").start_with_context("GET /", &parent);
    use opentelemetry::trace::Span as _;
    assert!(!span.is_recording());
    assert_eq!(span.span_context().trace_id(), TraceId::from(0x4bf9_u128), "the trace goes on");
}

//! The sampler: a span that nobody would record is not recorded at all.

use std::sync::Arc;

use opentelemetry::trace::{Link, SpanKind, TraceContextExt, TraceId};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SamplingDecision, SamplingResult, ShouldSample};
use usertrace::OtelSpanTracepoints;

/// Records and samples a span only while a recorder listens to the span
/// events (one load); otherwise the span is non-recording and its context
/// (trace id, tracestate) still propagates, so a service nobody records
/// does not cut the trace. Made by
/// [`UsertraceSpanExporter::sampler`](crate::UsertraceSpanExporter::sampler);
/// wrap it in the SDK's `Sampler::ParentBased` to follow a parent's
/// decision first.
#[derive(Debug, Clone)]
pub struct UsertraceSampler {
    tracepoints: Arc<OtelSpanTracepoints>,
}

impl UsertraceSampler {
    pub(crate) fn new(tracepoints: Arc<OtelSpanTracepoints>) -> UsertraceSampler {
        UsertraceSampler { tracepoints }
    }
}

impl ShouldSample for UsertraceSampler {
    fn should_sample(
        &self,
        parent_context: Option<&Context>,
        _trace_id: TraceId,
        _name: &str,
        _span_kind: &SpanKind,
        _attributes: &[KeyValue],
        _links: &[Link],
    ) -> SamplingResult {
        let decision = if self.tracepoints.enabled() { SamplingDecision::RecordAndSample } else { SamplingDecision::Drop };
        let trace_state = parent_context.map(|c| c.span().span_context().trace_state().clone()).unwrap_or_default();
        SamplingResult { decision, attributes: Vec::new(), trace_state }
    }
}

#[cfg(test)]
mod tests;

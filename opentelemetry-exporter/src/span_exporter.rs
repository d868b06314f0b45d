//! The span exporter: the SDK's spans, as OTLP protobufs, into usertrace
//! events.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::Span as OtlpSpan;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use prost::Message;
use usertrace::otel_span::monotonic_from_unix_ns;
use usertrace::{OtelSpan, OtelSpanTracepoints, Provider};

use crate::resource::ResourceWriter;

/// Writes each span of a batch as usertrace events
/// (`<provider>_otel_span`), in the calling thread.
///
/// It never blocks: an emit writes into a kernel buffer or a
/// shared-memory ring, and what does not fit is counted by the recorder as
/// lost. While no recorder listens, a batch costs one load. Spans it could
/// not write are counted ([`dropped`](Self::dropped)) and fail the batch.
#[derive(Debug)]
pub struct UsertraceSpanExporter {
    // Shared with the samplers made from it ([`Self::sampler`]).
    tracepoints: Arc<OtelSpanTracepoints>,
    resource: ResourceWriter,
    shut_down: AtomicBool,
    dropped: AtomicU64,
}

impl UsertraceSpanExporter {
    /// Registers `<provider>_otel_span`, its part event, and the
    /// process's `<provider>_otel_resource`.
    pub fn new(provider: &str) -> Result<UsertraceSpanExporter, usertrace::Error> {
        let tracepoints = Arc::new(OtelSpanTracepoints::new(&Provider::new(provider)?)?);
        let resource = ResourceWriter::new(provider)?;
        Ok(UsertraceSpanExporter { tracepoints, resource, shut_down: AtomicBool::new(false), dropped: AtomicU64::new(0) })
    }

    /// Whether a recorder listens to the spans: one load.
    pub fn enabled(&self) -> bool {
        self.tracepoints.enabled()
    }

    /// A sampler that records a span only while a recorder listens to this
    /// exporter's spans ([`UsertraceSampler`](crate::UsertraceSampler)).
    pub fn sampler(&self) -> crate::UsertraceSampler {
        crate::UsertraceSampler::new(Arc::clone(&self.tracepoints))
    }

    /// How many spans could not be written (too large even in parts, or
    /// refused by the transport).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn write(&self, span: SpanData) -> Result<(), usertrace::Error> {
        let (scope_name, scope_version) = (span.instrumentation_scope.name().to_owned(), span.instrumentation_scope.version().map(str::to_owned));
        let otlp = OtlpSpan::from(span);
        let id = |bytes: &[u8]| bytes.try_into().map_or(0, u64::from_be_bytes);
        let trace_id = otlp.trace_id.as_slice().try_into().map_or(0, u128::from_be_bytes);
        let start_ns = monotonic_from_unix_ns(otlp.start_time_unix_nano);
        let carried = OtelSpan {
            start_ns,
            duration_ns: otlp.end_time_unix_nano.saturating_sub(otlp.start_time_unix_nano),
            trace_id,
            span_id: id(&otlp.span_id),
            parent_span_id: id(&otlp.parent_span_id),
            name: &otlp.name,
            scope_name: &scope_name,
            scope_version: scope_version.as_deref().unwrap_or(""),
            status_code: status_code(&otlp),
            otlp: &otlp.encode_to_vec(),
        };
        self.tracepoints.emit(&carried).map(drop)
    }
}

/// The readable `status_code` of a span: the protobuf's own code (OTLP's
/// numbers, 0 unset, 1 ok, 2 error), so the two cannot disagree.
fn status_code(otlp: &OtlpSpan) -> u32 {
    otlp.status.as_ref().map_or(0, |s| u32::try_from(s.code).unwrap_or(0))
}

impl SpanExporter for UsertraceSpanExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if self.shut_down.load(Ordering::Relaxed) {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        if !self.enabled() {
            return Ok(());
        }
        // The resource first, so a recorder that just attached names the
        // batch's spans by it.
        let resource = self.resource.write();
        let spans = crate::batch::write_all(batch, "spans", &self.dropped, |span| self.write(span));
        spans.and(resource.map_err(crate::resource::not_written))
    }

    /// Keeps the SDK's resource (its `service.name` and the rest), written
    /// before the spans a recorder sees.
    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.resource.set(resource);
    }

    /// Later exports fail, as the SDK's contract says; nothing is buffered
    /// here, so there is nothing to send first.
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.shut_down.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Returns at once: every span is written when it is exported.
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
}

#[cfg(test)]
mod tests;

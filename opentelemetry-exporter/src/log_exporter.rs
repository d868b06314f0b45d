//! The log exporter: the SDK's log records, as OTLP protobufs, into
//! usertrace events.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry::logs::Severity;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::logs::v1::LogRecord as OtlpLogRecord;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::logs::{LogBatch, LogExporter};
use prost::Message;
use usertrace::{OtelLog, OtelLogTracepoints, Provider};

use crate::resource::ResourceWriter;

/// Writes each log record of a batch as a usertrace event
/// (`<provider>_otel_log`), in the calling thread; like
/// [`UsertraceSpanExporter`](crate::UsertraceSpanExporter), it never
/// blocks, costs one load per batch while nobody records, and counts what
/// it could not write.
#[derive(Debug)]
pub struct UsertraceLogExporter {
    tracepoints: OtelLogTracepoints,
    resource: ResourceWriter,
    shut_down: AtomicBool,
    dropped: AtomicU64,
}

impl UsertraceLogExporter {
    /// Registers `<provider>_otel_log`, its part event, and the process's
    /// `<provider>_otel_resource`.
    pub fn new(provider: &str) -> Result<UsertraceLogExporter, usertrace::Error> {
        let tracepoints = OtelLogTracepoints::new(&Provider::new(provider)?)?;
        let resource = ResourceWriter::new(provider)?;
        Ok(UsertraceLogExporter { tracepoints, resource, shut_down: AtomicBool::new(false), dropped: AtomicU64::new(0) })
    }

    /// Whether a recorder listens to the log records: one load.
    pub fn enabled(&self) -> bool {
        self.tracepoints.enabled()
    }

    /// How many log records could not be written.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn write(&self, record: OtlpLogRecord, scope: &opentelemetry::InstrumentationScope) -> Result<(), usertrace::Error> {
        let body = match record.body.as_ref().and_then(|b| b.value.as_ref()) {
            Some(any_value::Value::StringValue(s)) => s.as_str(),
            _ => "",
        };
        let log = OtelLog {
            trace_id: record.trace_id.as_slice().try_into().map_or(0, u128::from_be_bytes),
            span_id: record.span_id.as_slice().try_into().map_or(0, u64::from_be_bytes),
            severity_number: u32::try_from(record.severity_number).unwrap_or(0),
            body,
            scope_name: scope.name(),
            scope_version: scope.version().unwrap_or(""),
            otlp: &record.encode_to_vec(),
        };
        self.tracepoints.emit(&log).map(drop)
    }
}

impl LogExporter for UsertraceLogExporter {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        if self.shut_down.load(Ordering::Relaxed) {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        if !self.enabled() {
            return Ok(());
        }
        let resource = self.resource.write();
        let logs = crate::batch::write_all(batch.iter(), "log records", &self.dropped, |(record, scope)| self.write(OtlpLogRecord::from(record), scope));
        logs.and(resource.map_err(crate::resource::not_written))
    }

    /// Keeps the SDK's resource, written before the records a recorder sees.
    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.resource.set(resource);
    }

    /// While nobody records, the SDK need not build the record at all.
    fn event_enabled(&self, _level: Severity, _target: &str, _name: Option<&str>) -> bool {
        self.enabled()
    }

    /// Later exports fail; nothing is buffered here.
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.shut_down.store(true, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests;

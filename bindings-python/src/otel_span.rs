//! `OtelSpans`, `OtelLogs` and `OtelResources`: the events an OpenTelemetry
//! SDK's finished spans, its log records and its Resource travel in. The
//! rules (fields, parts, when a resource is due) are the core's
//! (`usertrace::otel_span`, `usertrace::otel_resource`);
//! this module only converts the arguments.

use pyo3::prelude::*;
use std::sync::Arc;

use usertrace::{OtelLog, OtelLogTracepoints, OtelResource, OtelResourceTracepoint, OtelSpan, OtelSpanTracepoints, Provider};

use crate::errors::to_pyerr;

/// `<provider>_otel_span` and `<provider>_otel_span_part`, registered.
#[pyclass(frozen, module = "usertrace")]
pub struct OtelSpans {
    inner: OtelSpanTracepoints,
}

#[pymethods]
impl OtelSpans {
    /// Declares and registers the provider's span events.
    #[new]
    fn new(py: Python<'_>, provider: &str) -> PyResult<Self> {
        let made = Provider::new(provider).and_then(|p| OtelSpanTracepoints::new(&p));
        made.map(|inner| OtelSpans { inner }).map_err(|e| to_pyerr(py, &e))
    }

    /// Whether a recorder listens: one load.
    #[getter]
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    /// Writes one finished span (its OTLP `Span` protobuf in `otlp`), in
    /// parts if it is large; returns how many events were written.
    #[pyo3(signature = (start_ns, duration_ns, trace_id, span_id, parent_span_id, name, scope_name, scope_version, status_code, otlp))]
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        py: Python<'_>,
        start_ns: u64,
        duration_ns: u64,
        trace_id: u128,
        span_id: u64,
        parent_span_id: u64,
        name: &str,
        scope_name: &str,
        scope_version: &str,
        status_code: u32,
        otlp: &[u8],
    ) -> PyResult<usize> {
        let span = OtelSpan { start_ns, duration_ns, trace_id, span_id, parent_span_id, name, scope_name, scope_version, status_code, otlp };
        self.inner.emit(&span).map_err(|e| to_pyerr(py, &e))
    }
}

/// `<provider>_otel_log` and `<provider>_otel_log_part`, registered.
#[pyclass(frozen, module = "usertrace")]
pub struct OtelLogs {
    inner: OtelLogTracepoints,
}

#[pymethods]
impl OtelLogs {
    /// Declares and registers the provider's log record events.
    #[new]
    fn new(py: Python<'_>, provider: &str) -> PyResult<Self> {
        let made = Provider::new(provider).and_then(|p| OtelLogTracepoints::new(&p));
        made.map(|inner| OtelLogs { inner }).map_err(|e| to_pyerr(py, &e))
    }

    /// Whether a recorder listens: one load.
    #[getter]
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    /// Writes one log record (its OTLP `LogRecord` protobuf in `otlp`), in
    /// parts if it is large; returns how many events were written.
    #[pyo3(signature = (trace_id, span_id, severity_number, body, scope_name, scope_version, otlp))]
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        py: Python<'_>,
        trace_id: u128,
        span_id: u64,
        severity_number: u32,
        body: &str,
        scope_name: &str,
        scope_version: &str,
        otlp: &[u8],
    ) -> PyResult<usize> {
        let log = OtelLog { trace_id, span_id, severity_number, body, scope_name, scope_version, otlp };
        self.inner.emit(&log).map_err(|e| to_pyerr(py, &e))
    }
}

/// The process's `<provider>_otel_resource`, shared by its exporters.
#[pyclass(frozen, module = "usertrace")]
pub struct OtelResources {
    inner: Arc<OtelResourceTracepoint>,
}

#[pymethods]
impl OtelResources {
    /// The process's resource event for `provider`, registered once.
    #[new]
    fn new(py: Python<'_>, provider: &str) -> PyResult<Self> {
        OtelResourceTracepoint::shared(provider).map(|inner| OtelResources { inner }).map_err(|e| to_pyerr(py, &e))
    }

    /// Whether a recorder listens: one load.
    #[getter]
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    /// Writes the resource (its OTLP `Resource` protobuf in `otlp`) if a
    /// recorder listens and the same was not written in the last second;
    /// returns whether it wrote.
    fn emit(&self, py: Python<'_>, service_name: &str, otlp: &[u8]) -> PyResult<bool> {
        self.inner.emit(&OtelResource { service_name, otlp }).map_err(|e| to_pyerr(py, &e))
    }
}

//! `TraceContext`: a W3C trace context, as the core reads and writes it
//! (`usertrace::trace_context`), held by a Python object.
//!
//! Reading a header never raises: a malformed, all-zero or over-long
//! `traceparent` is no context (`None`), and the service starts a new
//! trace, as W3C Trace Context asks. Only a `headers` that is no mapping
//! raises (a program's mistake, not a peer's).

use pyo3::prelude::*;
use pyo3::types::PyAny;
use usertrace::trace_context::{self, TraceContext as Context};

/// A W3C trace context: trace id, the span id the next span names as its
/// parent, trace flags and `tracestate`. Made by `TraceContext.extract`,
/// `TraceContext.from_traceparent`, or a span's `context`.
#[pyclass(frozen, eq, hash, name = "TraceContext", module = "usertrace")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TraceContext(pub(crate) Context);

#[pymethods]
impl TraceContext {
    /// The context a `traceparent` header value gives, with `tracestate`
    /// if given (an invalid one is dropped); `None` for a malformed,
    /// all-zero or over-long value.
    #[staticmethod]
    #[pyo3(signature = (traceparent, tracestate = None))]
    fn from_traceparent(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let context = Context::from_traceparent(traceparent).ok()?;
        Some(TraceContext(match tracestate {
            Some(state) => context.with_tracestate(state),
            None => context,
        }))
    }

    /// The context of a request's `headers` (any mapping with `items()`:
    /// a dict, `http.client.HTTPMessage`, Flask's or Django's headers),
    /// names matched without regard to case; `None` without a valid
    /// `traceparent`.
    #[staticmethod]
    fn extract(headers: &Bound<'_, PyAny>) -> PyResult<Option<TraceContext>> {
        let mut wanted: Vec<(String, String)> = Vec::with_capacity(2);
        for item in headers.call_method0("items")?.try_iter()? {
            let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            let (Ok(name), Ok(value)) = (name.extract::<String>(), value.extract::<String>()) else { continue };
            if [trace_context::TRACEPARENT_HEADER, trace_context::TRACESTATE_HEADER].iter().any(|h| name.eq_ignore_ascii_case(h)) {
                wanted.push((name.to_ascii_lowercase(), value));
            }
        }
        Ok(Context::extract(&wanted).map(TraceContext))
    }

    /// Writes `traceparent` (and `tracestate`, if it carries one) into
    /// `headers` (a mutable mapping) for an outgoing request.
    fn inject(&self, headers: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut pairs: Vec<(String, String)> = Vec::with_capacity(2);
        self.0.inject(&mut pairs);
        pairs.into_iter().try_for_each(|(name, value)| headers.set_item(name, value))
    }

    /// The `traceparent` header value.
    #[getter]
    fn traceparent(&self) -> String {
        self.0.traceparent().to_string()
    }

    /// The `tracestate` header value it carries, if any.
    #[getter]
    fn tracestate(&self) -> Option<String> {
        self.0.tracestate.as_ref().map(|s| s.as_str().to_owned())
    }

    /// The trace id: 32 lowercase hex digits.
    #[getter]
    fn trace_id(&self) -> String {
        format!("{:032x}", self.0.trace_id)
    }

    /// The span id: 16 lowercase hex digits.
    #[getter]
    fn span_id(&self) -> String {
        format!("{:016x}", self.0.span_id)
    }

    /// Whether the caller records the trace (flag bit 0).
    #[getter]
    fn sampled(&self) -> bool {
        self.0.is_sampled()
    }

    fn __repr__(&self) -> String {
        format!("<usertrace.TraceContext {}>", self.0.traceparent())
    }
}

//! Spans: `SpanTracepoint.begin(...)` returns a `Span`, ended by `end()`,
//! by leaving its `with` block, or when it is garbage-collected.
//!
//! The convention (a begin event whose first field is the `span_begin`
//! id, `<provider>_span_end` and `<provider>_span_error` to end it) and
//! the ids are the core's (`usertrace::span`); this module only holds a
//! Python object per open span and converts the arguments.
//!
//! While the begin event is disabled, `begin` returns one shared span
//! that was never begun, so it allocates nothing; ending that does nothing.

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};
use usertrace::{Definition, RegisterOptions};

use crate::convert::convert;
use crate::errors::to_pyerr;
use crate::fastcall::{fast_method, FastArgs, MethodDef};
use crate::trace_context::TraceContext;
use crate::tracepoint::Tracepoint;

/// A span's begin event `<provider>_<event>(span_begin u64, trace context, fields...)`,
/// with the provider's end events. Made by `Provider.span`.
#[pyclass(frozen, extends = Tracepoint, module = "usertrace")]
pub struct SpanTracepoint {
    end: Py<Tracepoint>,
    error: Py<Tracepoint>,
}

/// Raises unless `given` is the event `definition` of `provider` describes.
fn check_end_event(
    py: Python<'_>,
    argument: &str,
    given: &Tracepoint,
    definition: Result<Definition, usertrace::Error>,
    maker: &str,
) -> PyResult<()> {
    let definition = definition.map_err(|e| to_pyerr(py, &e))?;
    if given.inner().name() == definition.name() && given.inner().fields() == definition.fields() {
        return Ok(());
    }
    Err(PyValueError::new_err(format!(
        "{argument} must be the event {} (made by Tracepoint.{maker}), not {}",
        definition.name(),
        given.inner().name()
    )))
}

#[pymethods]
impl SpanTracepoint {
    /// Defines the begin event `<provider>_<event>` with `fields` after the
    /// id and registers it; `end` and `error` are the provider's
    /// `Tracepoint.span_end` and `Tracepoint.span_error`.
    #[new]
    #[pyo3(signature = (provider, event, fields, end, error, *, persist = false, multi_format = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        provider: &str,
        event: &str,
        fields: Vec<(String, String)>,
        end: Py<Tracepoint>,
        error: Py<Tracepoint>,
        persist: bool,
        multi_format: bool,
    ) -> PyResult<PyClassInitializer<Self>> {
        // Checked first: a refused span must not leave its begin event registered.
        check_end_event(py, "end", end.get(), Definition::span_end(provider), "span_end")?;
        check_end_event(py, "error", error.get(), Definition::span_error(provider), "span_error")?;
        let options = RegisterOptions { persist, multi_format };
        let begin = Tracepoint::define(py, provider, event, fields, options, Definition::span_begin)?;
        Ok(PyClassInitializer::from(begin).add_subclass(SpanTracepoint { end, error }))
    }

    /// `<provider>_span_end`, which `Span.end()` emits.
    #[getter]
    fn end_event(&self, py: Python<'_>) -> Py<Tracepoint> {
        self.end.clone_ref(py)
    }

    /// `<provider>_span_error`, which `Span.end(error=...)` emits.
    #[getter]
    fn error_event(&self, py: Python<'_>) -> Py<Tracepoint> {
        self.error.clone_ref(py)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        slf.as_super().get().describe("SpanTracepoint")
    }
}

/// `begin` and `validate`, with the vectorcall convention (see `fastcall`).
pub(crate) fn install_methods(ty: &Bound<'_, PyType>) -> PyResult<()> {
    crate::fastcall::install(ty, &BEGIN)?;
    crate::fastcall::install(ty, &BEGIN_IN)?;
    crate::fastcall::install(ty, &VALIDATE)
}

static BEGIN: MethodDef = MethodDef::new(
    c"begin",
    c"begin($self, /, *args, **kwargs)\n--\n\n\
Begins a span: emits the begin event with a new id, then the values\n\
(by position, in field order, or by name), and returns the `Span`.\n\
While disabled it checks nothing and returns a span that was not\n\
begun (`id` 0), whose end emits nothing.",
    begin_fast,
);
fast_method!(begin_fast, SpanTracepoint, begin);

fn begin<'py>(slf: &Bound<'py, SpanTracepoint>, call: FastArgs<'_, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let begin = slf.as_super().get();
    if !begin.enabled() {
        return Ok(not_begun(py)?.into_bound(py).into_any());
    }
    crate::thread_names::name_this_thread(py);
    let id = begin
        .arguments(usertrace::span::BEGIN_LEADING_FIELDS)
        .with_values(&call, |values| begin.inner().begin_span(values).map_err(|e| to_pyerr(py, &e)))?;
    if id == 0 {
        // Disabled between the check and the emit: nothing was written.
        return Ok(not_begun(py)?.into_bound(py).into_any());
    }
    let span = Span { id, open: AtomicBool::new(true), tracepoint: Some(slf.clone().unbind()), context: None };
    Ok(Bound::new(py, span)?.into_any())
}

static BEGIN_IN: MethodDef = MethodDef::new(
    c"begin_in",
    c"begin_in($self, parent, /, *args, **kwargs)\n--\n\n\
Begins a span under `parent` (a `TraceContext` from this process or\n\
another; `None`: a new trace), writing its trace context, then the\n\
values as `begin` takes them; returns the `Span`, whose `context` is\n\
what to hand on. While disabled it writes nothing and returns a span\n\
that was not begun, whose `context` is `parent`, passed on unchanged.",
    begin_in_fast,
);
fast_method!(begin_in_fast, SpanTracepoint, begin_in);

fn begin_in<'py>(slf: &Bound<'py, SpanTracepoint>, call: FastArgs<'_, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let Some((parent, values)) = call.split_first() else {
        return Err(pyo3::exceptions::PyTypeError::new_err("begin_in() takes the parent (a TraceContext or None) first"));
    };
    let parent = if parent.is_none() {
        None
    } else {
        let given = parent.cast::<TraceContext>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("begin_in(): the parent must be a usertrace.TraceContext or None")
        })?;
        Some(given.get().0.clone())
    };
    let begin = slf.as_super().get();
    if !begin.enabled() {
        let span = Span { id: 0, open: AtomicBool::new(false), tracepoint: None, context: parent };
        return Ok(Bound::new(py, span)?.into_any());
    }
    crate::thread_names::name_this_thread(py);
    let begun = begin
        .arguments(usertrace::span::BEGIN_LEADING_FIELDS)
        .with_values(&values, |values| begin.inner().begin_span_in(parent.as_ref(), values).map_err(|e| to_pyerr(py, &e)))?;
    let tracepoint = (begun.id != 0).then(|| slf.clone().unbind());
    let span = Span { id: begun.id, open: AtomicBool::new(begun.id != 0), tracepoint, context: begun.context };
    Ok(Bound::new(py, span)?.into_any())
}

static VALIDATE: MethodDef = MethodDef::new(
    c"validate",
    c"validate($self, /, *args, **kwargs)\n--\n\n\
Checks the span's values as `begin` would, raising the same errors,\n\
whether or not the tracepoint is enabled, and writes nothing.",
    validate_fast,
);
fast_method!(validate_fast, SpanTracepoint, validate);

fn validate<'py>(slf: &Bound<'py, SpanTracepoint>, call: FastArgs<'_, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let begin = slf.as_super().get();
    begin.arguments(usertrace::span::BEGIN_LEADING_FIELDS).with_values(&call, |values| {
        let lead = usertrace::span::begin_leading_values(0, None);
        usertrace::span::with_leading_values(&lead, values, |all| begin.inner().validate(all)).map_err(|e| to_pyerr(py, &e))
    })?;
    Ok(py.None().into_bound(py))
}

/// The span `begin` returns while nobody listens; shared, never begun.
static NOT_BEGUN: PyOnceLock<Py<Span>> = PyOnceLock::new();

fn not_begun(py: Python<'_>) -> PyResult<Py<Span>> {
    let span = NOT_BEGUN.get_or_try_init(py, || {
        Py::new(py, Span { id: 0, open: AtomicBool::new(false), tracepoint: None, context: None })
    })?;
    Ok(span.clone_ref(py))
}

/// One span, open until `end()`, the end of its `with` block, or its
/// garbage collection, whichever comes first; it ends once. Any thread may
/// end it.
#[pyclass(frozen, module = "usertrace")]
pub struct Span {
    /// 0 when the span was not begun.
    id: u64,
    /// True until the span's one end event is written (or skipped).
    open: AtomicBool,
    /// None when the span was not begun.
    tracepoint: Option<Py<SpanTracepoint>>,
    /// What to hand on: the span's own trace context if it was begun
    /// under one (`begin_in`), else its parent's; None for a span begun
    /// by id (`begin`), which says nothing of its trace.
    context: Option<usertrace::trace_context::TraceContext>,
}

impl Span {
    /// Whether this call is the one that ends the span.
    fn close(&self) -> Option<&SpanTracepoint> {
        // ATOMICS: the swap makes exactly one caller see `true`, so two
        // threads ending one span write one end event. It orders nothing
        // else, hence Relaxed.
        if !self.open.swap(false, Ordering::Relaxed) {
            return None;
        }
        self.tracepoint.as_ref().map(|tp| tp.get())
    }
}

/// The name Python's tracebacks give an exception type: `KeyError`,
/// `json.decoder.JSONDecodeError`, `Outer.Error` in `__main__`.
fn type_name(ty: &Bound<'_, PyAny>) -> PyResult<String> {
    let qualname = match ty.cast::<PyType>() {
        Ok(t) => t.qualname()?.to_string(),
        Err(_) => return Ok(ty.repr()?.to_string()),
    };
    let module: String = ty.getattr("__module__").and_then(|m| m.extract()).unwrap_or_default();
    Ok(match module.as_str() {
        "" | "builtins" | "__main__" => qualname,
        _ => format!("{module}.{qualname}"),
    })
}

#[pymethods]
impl Span {
    /// The id the span's events carry (`span_begin`, `span_end`); 0 if it
    /// was not begun because nobody listened.
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    /// Its trace context, to hand to the next service (`inject` it into a
    /// request's headers): its own if it was begun with `begin_in`; its
    /// parent's, passed on unchanged, if nobody listened; None for a span
    /// begun with `begin`.
    #[getter]
    fn context(&self) -> Option<TraceContext> {
        self.context.clone().map(TraceContext)
    }

    /// Its `context`'s `traceparent` header value, if it has one.
    #[getter]
    fn traceparent(&self) -> Option<String> {
        self.context.as_ref().map(|c| c.traceparent().to_string())
    }

    /// True until the span ends; a span that was not begun is never open.
    #[getter]
    fn open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// Ends the span: `<provider>_span_end`, or with `error` (a str)
    /// `<provider>_span_error`. Only the first end of a span writes; later
    /// ones, and ending a span that was not begun, do nothing.
    #[pyo3(signature = (error = None))]
    fn end(&self, py: Python<'_>, error: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let Some(error) = error else {
            let Some(tp) = self.close() else { return Ok(()) };
            return tp.end.get().inner().end_span(self.id).map_err(|e| to_pyerr(py, &e));
        };
        // Converted before the span is closed, so a bad value leaves it open.
        let Some(tp) = self.tracepoint.as_ref().map(|tp| tp.get()) else { return Ok(()) };
        let error_event = tp.error.get().inner();
        let arg = convert(error_event.name(), &error_event.fields()[1], error)?;
        if self.close().is_none() {
            return Ok(());
        }
        error_event.end_span_with(self.id, &[arg.value()]).map_err(|e| to_pyerr(py, &e))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Ends the span; with the exception's type name if one left the block.
    /// Never suppresses the exception.
    #[pyo3(signature = (exc_type, _exc, _tb))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if !self.open.load(Ordering::Relaxed) {
            return Ok(false);
        }
        match exc_type {
            None => self.end(py, None)?,
            Some(ty) => self.end(py, Some(PyString::new(py, &type_name(ty)?).as_any()))?,
        }
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match &self.tracepoint {
            None => "<usertrace.Span not begun>".to_owned(),
            Some(tp) => {
                let state = if self.open.load(Ordering::Relaxed) { "open" } else { "ended" };
                let name = tp.bind(py).as_super().get().inner().name().to_owned();
                format!("<usertrace.Span {name} {} {state}>", self.id)
            }
        }
    }
}

impl Drop for Span {
    /// A span dropped while open ends then, as the core's `Span` guard does.
    fn drop(&mut self) {
        if let Some(tp) = self.close() {
            // A drop cannot report; a failed write means the tracer went away.
            let _ = tp.end.get().inner().end_span(self.id);
        }
    }
}

/// The event name (after `<provider>_`) of a span named `name`: the core's
/// one rule (`usertrace::span::event_name_for`), e.g. `Foo.bar` → `Foo_bar`.
#[pyfunction]
pub(crate) fn span_event_name(py: Python<'_>, name: &str) -> PyResult<String> {
    usertrace::span::event_name_for(name).map(|n| n.into_owned()).map_err(|e| to_pyerr(py, &e))
}

//! The `Tracepoint` class: a `DynamicTracepoint` and its Python arguments.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};
use usertrace::{Definition, DynamicTracepoint, Error, ErrorKind, Field, FieldType, RegisterOptions};

use crate::arguments::{field_names, Fields};
use crate::errors::{to_pyerr, usertrace_error};
use crate::fastcall::{fast_method, FastArgs, MethodDef};

/// One user_events tracepoint, named `<provider>_<event>`. Made by
/// `Provider.tracepoint`; unregistered by `close()`, by its provider's
/// `close()`, or when garbage-collected. `SpanTracepoint` extends it.
#[pyclass(frozen, subclass, weakref, module = "usertrace")]
pub struct Tracepoint {
    inner: DynamicTracepoint,
    /// The fields' names, interned once, so that keyword arguments match
    /// them by pointer.
    names: Vec<Py<PyString>>,
    provider: String,
    event: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    closed: bool,
    /// Why the last registration failed (only `Unavailable` is kept quiet).
    error: Option<Error>,
}

impl Tracepoint {
    /// What the `enabled` descriptor reads.
    #[inline(always)]
    pub(crate) fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    /// The core's tracepoint, for the span methods.
    pub(crate) fn inner(&self) -> &DynamicTracepoint {
        &self.inner
    }

    /// A tracepoint for the definition `define(provider, event, fields)`
    /// makes, registered. If user_events is unavailable it is disabled and
    /// `registration_error` says why; any other failure raises.
    pub(crate) fn define(
        py: Python<'_>,
        provider: &str,
        event: &str,
        fields: Vec<(String, String)>,
        options: RegisterOptions,
        define: impl FnOnce(&str, &str, Vec<Field>) -> Result<Definition, Error>,
    ) -> PyResult<Self> {
        // A bad provider is named before any field: the fields' errors name the event.
        usertrace::validate_name("provider", provider).map_err(|e| to_pyerr(py, &e))?;
        let mut parsed = Vec::with_capacity(fields.len());
        for (name, ty) in fields {
            let Some(parsed_ty) = FieldType::parse(&ty) else {
                let (event, given) = (format!("{provider}_{event}"), format!("\"{}\"", ty.escape_debug()));
                return Err(to_pyerr(py, &Error::UnknownFieldType { event, field: name, given }));
            };
            parsed.push(Field::owned(name, parsed_ty));
        }
        let definition = define(provider, event, parsed).map_err(|e| to_pyerr(py, &e))?;
        let inner = DynamicTracepoint::from_definition(definition, options);
        let mut state = State::default();
        match inner.register() {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Unavailable => state.error = Some(e),
            Err(e) => return Err(to_pyerr(py, &e)),
        }
        let names = inner.fields().iter().map(|f| PyString::intern(py, &f.name).unbind()).collect();
        Ok(Tracepoint {
            inner,
            names,
            provider: provider.to_owned(),
            event: event.to_owned(),
            state: Mutex::new(state),
        })
    }

    /// `<usertrace.CLASS name (fields) state>`.
    pub(crate) fn describe(&self, class: &str) -> String {
        let state = if self.state().closed {
            "closed"
        } else if self.inner.enabled() {
            "enabled"
        } else if self.inner.is_registered() {
            "disabled"
        } else {
            "unregistered"
        };
        format!("<usertrace.{class} {} ({}) {state}>", self.inner.name(), field_names(self.inner.fields()))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The fields after the first `skip` (which the binding fills in, like
    /// a span's id), to match a call's arguments to.
    pub(crate) fn arguments(&self, skip: usize) -> Fields<'_> {
        let fields = self.inner.fields();
        Fields {
            event: self.inner.name(),
            fields: fields.get(skip..).unwrap_or(&[]),
            names: self.names.get(skip..).unwrap_or(&[]),
        }
    }
}

#[pymethods]
impl Tracepoint {
    /// Defines `<provider>_<event>` and registers it. If user_events is
    /// unavailable the tracepoint is created disabled and
    /// `registration_error` says why; any other failure raises.
    #[new]
    #[pyo3(signature = (provider, event, fields, *, persist = false, multi_format = false))]
    fn new(
        py: Python<'_>,
        provider: &str,
        event: &str,
        fields: Vec<(String, String)>,
        persist: bool,
        multi_format: bool,
    ) -> PyResult<Self> {
        let options = RegisterOptions { persist, multi_format };
        Tracepoint::define(py, provider, event, fields, options, Definition::with_provider)
    }

    /// `<provider>_span_end(span_end u64)`, which ends the provider's spans.
    #[staticmethod]
    #[pyo3(signature = (provider, *, persist = false, multi_format = false))]
    fn span_end(py: Python<'_>, provider: &str, persist: bool, multi_format: bool) -> PyResult<Self> {
        let options = RegisterOptions { persist, multi_format };
        let event = usertrace::span::SPAN_END_EVENT;
        Tracepoint::define(py, provider, event, Vec::new(), options, |p, _, _| Definition::span_end(p))
    }

    /// `<provider>_span_error(span_end u64, error str)`, which ends the
    /// provider's spans because of an error.
    #[staticmethod]
    #[pyo3(signature = (provider, *, persist = false, multi_format = false))]
    fn span_error(py: Python<'_>, provider: &str, persist: bool, multi_format: bool) -> PyResult<Self> {
        let options = RegisterOptions { persist, multi_format };
        let event = usertrace::span::SPAN_ERROR_EVENT;
        Tracepoint::define(py, provider, event, Vec::new(), options, |p, _, _| Definition::span_error(p))
    }

    /// The kernel's event name, `<provider>_<event>`.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    #[getter]
    fn provider(&self) -> &str {
        &self.provider
    }

    #[getter]
    fn event(&self) -> &str {
        &self.event
    }

    /// The fields as `(name, type)` pairs, in order.
    #[getter]
    fn fields(&self) -> Vec<(String, String)> {
        self.inner.fields().iter().map(|f| (f.name.to_string(), f.ty.declared_name().into_owned())).collect()
    }

    /// The definition handed to the kernel, e.g. `app_req u32 code;__rel_loc char[] path`.
    #[getter]
    fn format(&self, py: Python<'_>) -> PyResult<String> {
        self.inner.tracepoint().format().map_err(|e| to_pyerr(py, &e))
    }

    /// Whether the kernel knows this tracepoint (False when user_events is
    /// unavailable, or after `close()`).
    #[getter]
    fn registered(&self) -> bool {
        self.inner.is_registered()
    }

    #[getter]
    fn closed(&self) -> bool {
        self.state().closed
    }

    /// Why the last registration failed, as a `UsertraceError`, or None.
    #[getter]
    fn registration_error(&self, py: Python<'_>) -> Option<PyErr> {
        self.state().error.as_ref().map(|e| usertrace_error(py, e))
    }

    /// Registers again (after user_events became available). Raises
    /// `UsertraceError` if it fails; does nothing if already registered.
    fn register(&self, py: Python<'_>) -> PyResult<()> {
        let mut state = self.state();
        if state.closed {
            return Err(PyValueError::new_err(format!("tracepoint {} is closed", self.inner.name())));
        }
        let result = self.inner.register();
        state.error = result.as_ref().err().cloned();
        result.map_err(|e| to_pyerr(py, &e))
    }

    /// Unregisters: the kernel stops writing the enable word and the
    /// tracepoint stays disabled for good. Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut state = self.state();
        state.closed = true;
        self.inner.unregister().map_err(|e| to_pyerr(py, &e))
    }

    fn __repr__(&self) -> String {
        self.describe("Tracepoint")
    }
}

/// `emit` and `validate`, with the vectorcall convention (see `fastcall`).
pub(crate) fn install_methods(ty: &Bound<'_, PyType>) -> PyResult<()> {
    crate::fastcall::install(ty, &EMIT)?;
    crate::fastcall::install(ty, &VALIDATE)
}

static EMIT: MethodDef = MethodDef::new(
    c"emit",
    c"emit($self, /, *args, **kwargs)\n--\n\n\
Writes one event if a tracer is attached; does nothing (and checks\n\
nothing) otherwise. Values by position, in field order, or by name.",
    emit_fast,
);
fast_method!(emit_fast, Tracepoint, emit);

fn emit<'py>(slf: &Bound<'py, Tracepoint>, call: FastArgs<'_, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let tp = slf.get();
    // Disabled, nothing is looked at: the arguments cost only the call.
    if tp.inner.enabled() {
        crate::thread_names::name_this_thread(py);
        tp.arguments(0).with_values(&call, |values| tp.inner.emit(values).map_err(|e| to_pyerr(py, &e)))?;
    }
    Ok(py.None().into_bound(py))
}

static VALIDATE: MethodDef = MethodDef::new(
    c"validate",
    c"validate($self, /, *args, **kwargs)\n--\n\n\
Checks values as `emit` would, raising the same errors, whether or not\n\
the tracepoint is enabled, and writes nothing.",
    validate_fast,
);
fast_method!(validate_fast, Tracepoint, validate);

fn validate<'py>(slf: &Bound<'py, Tracepoint>, call: FastArgs<'_, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let tp = slf.get();
    tp.arguments(0).with_values(&call, |values| tp.inner.validate(values).map_err(|e| to_pyerr(py, &e)))?;
    Ok(py.None().into_bound(py))
}

/// Raises `UsertraceError` (kind INVALID_NAME) unless `name` is a valid
/// provider, event or field name (`what`).
#[pyfunction]
pub(crate) fn check_name(py: Python<'_>, what: &str, name: &str) -> PyResult<()> {
    let what = match what {
        "provider" => "provider",
        "event" => "event",
        "field" => "field",
        _ => return Err(PyValueError::new_err(format!("check_name: {what:?} is not provider, event or field"))),
    };
    usertrace::validate_name(what, name).map_err(|e| to_pyerr(py, &e))
}

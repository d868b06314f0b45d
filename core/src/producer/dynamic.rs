//! Tracepoints defined at run time, as the language bindings need.
//!
//! # Safety
//! Registration needs the enable word to stay put until unregistered: the
//! `Box` keeps it at one address, and `Drop` unregisters before it frees
//! (or leaks the word if the kernel refuses).
#![allow(unsafe_code)]

use super::definition::Definition;
use super::field::Field;
use super::span::Begun;
use super::tracepoint::{RegisterOptions, Tracepoint};
use super::value::Value;
use crate::trace_context::TraceContext;
use crate::Error;

/// A tracepoint whose name and fields are known only at run time. It lives
/// on the heap and is unregistered before that memory is freed.
///
/// [`Provider`](crate::Provider) makes these with the `<provider>_` prefix;
/// `new` takes the full event name.
///
/// ```
/// use usertrace::{DynamicTracepoint, ErrorKind, Field, FieldType, RegisterOptions, Value};
///
/// let fields = vec![Field::new("id", FieldType::U32), Field::new("msg", FieldType::Str)];
/// let tp = DynamicTracepoint::new("myapp_job", fields, RegisterOptions::default())?;
/// // A bad value is an error even while no tracer is attached.
/// assert!(tp.validate(&[Value::U32(7)]).is_err());
/// match tp.register() {
///     Ok(()) => {}
///     // Without user_events the tracepoint stays disabled, and emits do nothing.
///     Err(e) if e.kind() == ErrorKind::Unavailable => assert!(!tp.enabled()),
///     Err(e) => return Err(e),
/// }
/// tp.emit(&[Value::U32(7), Value::Str("done")])?;
/// # Ok::<(), usertrace::Error>(())
/// ```
pub struct DynamicTracepoint {
    // Boxed so the enable word keeps its address when the handle moves.
    inner: Box<Tracepoint>,
}

impl DynamicTracepoint {
    /// Validates the definition. Nothing is registered yet: call
    /// [`register`](Self::register), so an unavailable kernel can be told
    /// apart from a bad definition.
    pub fn new(name: impl Into<String>, fields: Vec<Field>, options: RegisterOptions) -> Result<Self, Error> {
        Ok(DynamicTracepoint::from_definition(Definition::new(name, fields)?, options))
    }

    /// A tracepoint for a definition already checked.
    pub fn from_definition(definition: Definition, options: RegisterOptions) -> Self {
        DynamicTracepoint { inner: Box::new(Tracepoint::new_dynamic(definition, options)) }
    }

    /// Registers with the kernel; retries if an earlier attempt failed.
    pub fn register(&self) -> Result<(), Error> {
        // SAFETY: the box keeps the word at one address, and Drop
        // unregisters it (or leaks it) before freeing.
        unsafe { self.inner.register_in_place() }
    }

    /// Stops the kernel writing the enable word.
    pub fn unregister(&self) -> Result<(), Error> {
        self.inner.unregister()
    }

    /// Whether a tracer is attached: one load. False until registered.
    #[inline(always)]
    pub fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    /// Emits one event if registered and a tracer is attached.
    #[inline]
    pub fn emit(&self, values: &[Value<'_>]) -> Result<(), Error> {
        if !self.enabled() {
            return Ok(());
        }
        self.inner.write_if_enabled(values)
    }

    /// Begins a span on this tracepoint, declared by
    /// [`Provider::span`](super::Provider::span): emits the id (and no
    /// trace context: the reader places it by nesting), then `values`, and
    /// returns the id to end it with. Returns 0, and emits nothing, while
    /// nobody listens.
    #[inline]
    pub fn begin_span(&self, values: &[Value<'_>]) -> Result<u64, Error> {
        super::span::begin_with(self.enabled(), values, |all| self.inner.write_if_enabled(all))
    }

    /// Begins a span on this tracepoint under `parent` (a span of this
    /// process or another; a new trace under `None` or an invalid one),
    /// writing its trace context: see [`Begun`]. While nobody listens it
    /// writes nothing and hands `parent` on.
    #[inline]
    pub fn begin_span_in(&self, parent: Option<&TraceContext>, values: &[Value<'_>]) -> Result<Begun, Error> {
        super::span::begin_in_with(self.enabled(), parent, values, |all| self.inner.write_if_enabled(all))
    }

    /// Ends span `id` on this `span_end` tracepoint; nothing for id 0.
    #[inline]
    pub fn end_span(&self, id: u64) -> Result<(), Error> {
        self.end_span_with(id, &[])
    }

    /// Ends span `id` on this tracepoint, whose first field is `span_end`
    /// (say `<provider>_span_error`), adding `values` to the span; nothing
    /// for id 0.
    #[inline]
    pub fn end_span_with(&self, id: u64, values: &[Value<'_>]) -> Result<(), Error> {
        super::span::end_with(id, id != 0 && self.enabled(), values, |all| self.inner.write_if_enabled(all))
    }

    /// Checks values as [`emit`](Self::emit) would, whether or not a
    /// tracer is attached, and writes nothing.
    pub fn validate(&self, values: &[Value<'_>]) -> Result<(), Error> {
        self.inner.validate(values)
    }

    /// The tracepoint itself, for its format and registration state.
    pub fn tracepoint(&self) -> &Tracepoint {
        &self.inner
    }

    /// The full event name, as tracers see it.
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// The fields, in payload order.
    pub fn fields(&self) -> &[Field] {
        self.inner.fields()
    }

    /// Whether the kernel currently has this tracepoint registered.
    pub fn is_registered(&self) -> bool {
        self.inner.is_registered()
    }
}

impl Drop for DynamicTracepoint {
    fn drop(&mut self) {
        if self.inner.unregister().is_err() {
            // The kernel may still write the word: it must never be freed.
            let placeholder = Box::new(Tracepoint::placeholder());
            std::mem::forget(std::mem::replace(&mut self.inner, placeholder));
        }
    }
}

impl std::fmt::Debug for DynamicTracepoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

//! One callsite's tracepoints: registered at its first record, with the
//! types that record gives (see [`record`](crate::record)), and written
//! on every record after while a tracer listens.
//!
//! | callsite | tracepoint | fields |
//! |----------|------------|--------|
//! | event | `<provider>_<name>` | `level` (`ERROR` … `TRACE`), then the event's own, `message` among them |
//! | span | `<provider>_<name>`, the span's begin | `span_begin` (the id) and its trace context (see [`context`](crate::context)), `level`, then the fields it had values for when first created, but `traceparent` and `tracestate` |
//! | span with fields left `Empty` | `<provider>_<name>_end`, the span's end when any of them was recorded | `span_end` (the id), then those fields, as text |
//! | span | `<provider>_span_end`, the span's end otherwise | `span_end` |
//!
//! A span begins when it is created and ends when it closes (its last
//! handle dropped), not at each enter and exit; an id links the two, as
//! the core's [span convention](mod@usertrace::span) has it, so a span may end
//! on another thread. Values of fields the span began with that are
//! recorded later are not written.

use std::sync::OnceLock;

use tracing_core::Metadata;
use usertrace::span::{span_begin_fields, SPAN_BEGIN_LEADING, SPAN_END_EVENT, SPAN_END_FIELDS};
use usertrace::{Begun, DynamicTracepoint, Error, ErrorKind, Field, FieldType, Provider, TraceContext, Value, MAX_FIELDS};

use crate::context::{carries_remote_parent, is_context_field};
use crate::naming::{collision_suffix, event_name, field_names};
use crate::record::{Scratch, Slot, MAX_CALLSITE_FIELDS};
use usertrace::fit_payload;

/// The first field of every event: the callsite's level.
pub const LEVEL_FIELD: &str = "level";

/// What a write that began no span gives.
const NOT_BEGUN: Begun = Begun { id: 0, context: None };

/// A callsite, and its tracepoints once its first record has registered them.
pub(crate) struct Callsite {
    meta: &'static Metadata<'static>,
    shape: OnceLock<Shape>,
    /// Its spans may carry a remote parent (a `traceparent` field).
    remote_parent: bool,
}

/// What a callsite's first record made of it.
pub(crate) enum Shape {
    Event(Typed),
    Span(SpanShape),
    /// Its definition was refused (said on stderr then): never written.
    Off,
}

pub(crate) struct SpanShape {
    pub(crate) begin: Typed,
    /// The fields without a value at the first creation: written, as
    /// text, on `end` when recorded.
    pub(crate) deferred: Vec<usize>,
    pub(crate) end: Option<DynamicTracepoint>,
}

/// What a tracepoint's first fields are.
#[derive(Clone, Copy)]
enum Leading {
    /// An event's `level`.
    Level,
    /// A span begin's `span_begin` id (the core writes it), then `level`.
    SpanBegin,
}

/// A tracepoint with the types of its callsite's first record, and the
/// text twin that takes the records that do not fit them.
pub(crate) struct Typed {
    tp: DynamicTracepoint,
    leading: Leading,
    event: String,
    names: Vec<String>,
    /// Which of the callsite's fields, in payload order (after the leading one).
    fields: Vec<usize>,
    types: Vec<FieldType>,
    twin: OnceLock<Option<DynamicTracepoint>>,
}

impl Callsite {
    pub(crate) fn new(meta: &'static Metadata<'static>) -> Self {
        Callsite { meta, shape: OnceLock::new(), remote_parent: carries_remote_parent(meta) }
    }

    /// Whether its spans may carry a remote parent, which they pass on
    /// even while nobody listens.
    #[inline]
    pub(crate) fn carries_remote_parent(&self) -> bool {
        self.remote_parent
    }

    /// Whether to take the next record: while its tracepoint is listened
    /// to, and for the first record, which registers it. One load after
    /// the first.
    #[inline]
    pub(crate) fn enabled(&self) -> bool {
        match self.shape.get() {
            None => true,
            Some(Shape::Event(typed)) => typed.tp.enabled(),
            Some(Shape::Span(span)) => span.begin.tp.enabled(),
            Some(Shape::Off) => false,
        }
    }

    /// The shape, registered from the record in `scratch` if this is the
    /// first (a span's values at creation, for a span).
    pub(crate) fn shape(&self, provider: &Provider, scratch: &Scratch) -> &Shape {
        self.shape.get_or_init(|| {
            let made = if self.meta.is_span() { span_shape(provider, self.meta, scratch) } else { event_shape(provider, self.meta, scratch) };
            made.unwrap_or(Shape::Off)
        })
    }

    /// The shape, if the first record has made it.
    pub(crate) fn registered(&self) -> Option<&Shape> {
        self.shape.get()
    }

    /// Unregisters every tracepoint of the callsite (the layer is going).
    pub(crate) fn unregister(&self) {
        let typed = match self.shape.get() {
            Some(Shape::Event(typed)) => typed,
            Some(Shape::Span(span)) => {
                if let Some(end) = &span.end {
                    let _ = end.unregister();
                }
                &span.begin
            }
            _ => return,
        };
        let _ = typed.tp.unregister();
        if let Some(Some(twin)) = typed.twin.get() {
            let _ = twin.unregister();
        }
    }
}

/// How many of a callsite's fields are kept (all, for `tracing`'s macros).
fn field_count(meta: &Metadata<'_>) -> usize {
    meta.fields().len().min(MAX_CALLSITE_FIELDS)
}

fn event_shape(provider: &Provider, meta: &'static Metadata<'static>, scratch: &Scratch) -> Option<Shape> {
    let fields: Vec<usize> = (0..field_count(meta)).collect();
    let names = field_names(&[LEVEL_FIELD], meta.fields().iter().take(fields.len()).map(|f| f.name()));
    let types = fields.iter().map(|&i| scratch.slots[i].field_type()).collect();
    Typed::register(provider, meta, Leading::Level, event_name(provider.name(), meta), names, fields, types).map(Shape::Event)
}

fn span_shape(provider: &Provider, meta: &'static Metadata<'static>, scratch: &Scratch) -> Option<Shape> {
    let name_of = |i: &usize| meta.fields().iter().nth(*i).map_or("", |f| f.name());
    // `traceparent` and `tracestate` give the span its parent: read, not written.
    let (fields, deferred): (Vec<usize>, Vec<usize>) =
        (0..field_count(meta)).filter(|i| !is_context_field(name_of(i))).partition(|&i| scratch.slots[i] != Slot::Absent);
    let leading: Vec<&str> = SPAN_BEGIN_LEADING.iter().map(|f| f.name.as_ref()).chain([LEVEL_FIELD]).collect();
    let names = field_names(&leading, fields.iter().map(name_of));
    let types = fields.iter().map(|&i| scratch.slots[i].field_type()).collect();
    let event = event_name(provider.name(), meta);
    let end = if deferred.is_empty() {
        None
    } else {
        let names = field_names(&[usertrace::span::SPAN_END_FIELD], deferred.iter().map(name_of));
        let mut end_fields = SPAN_END_FIELDS.to_vec();
        end_fields.extend(names.into_iter().map(|n| Field::owned(n, FieldType::Str)));
        Some(register(provider, meta, &format!("{event}_end"), end_fields)?)
    };
    let begin = Typed::register(provider, meta, Leading::SpanBegin, event, names, fields, types)?;
    Some(Shape::Span(SpanShape { begin, deferred, end }))
}

/// Defines and registers `<provider>_<event>`; on another definition of
/// that name, `<provider>_<event>_<hash of the callsite>`. `None` if the
/// definition is refused; an unregistered tracepoint (disabled for good)
/// if the kernel refused it.
fn register(provider: &Provider, meta: &Metadata<'_>, event: &str, fields: Vec<Field>) -> Option<DynamicTracepoint> {
    let tp = provider.define(event, fields.clone()).map_err(|e| report(meta, &e)).ok()?;
    match tp.register() {
        Ok(()) => Some(tp),
        Err(e) if e.kind() == ErrorKind::FieldsMismatch => {
            let other = provider.define(&format!("{event}{}", collision_suffix(meta)), fields).map_err(|e| report(meta, &e)).ok()?;
            if let Err(e) = other.register() {
                report(meta, &e);
            }
            Some(other)
        }
        Err(e) => {
            // Without user_events, or without the right to use them, every
            // tracepoint stays disabled: what `usertrace status` explains.
            if !matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::PermissionDenied) {
                report(meta, &e);
            }
            Some(tp)
        }
    }
}

/// The provider's `<provider>_span_end`, which ends the spans that have
/// no end of their own; `None` if refused (said on stderr).
pub(crate) fn provider_span_end(provider: &Provider) -> Option<DynamicTracepoint> {
    let refused = |e: Error| eprintln!("usertrace-tracing: {}: {e}; spans are not ended", provider.event_name(SPAN_END_EVENT));
    let tp = provider.define(SPAN_END_EVENT, SPAN_END_FIELDS.to_vec()).map_err(refused).ok()?;
    if let Err(e) = tp.register() {
        if !matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::PermissionDenied) {
            refused(e);
        }
    }
    Some(tp)
}

/// Says once (a callsite registers once) why a callsite is not written.
fn report(meta: &Metadata<'_>, error: &Error) {
    let place = match (meta.file(), meta.line()) {
        (Some(file), Some(line)) => format!(" at {file}:{line}"),
        _ => String::new(),
    };
    eprintln!("usertrace-tracing: {} `{}`{place}: {error}; its records are not written", meta.target(), meta.name());
}

fn definition_fields(leading: Leading, names: &[String], types: impl Iterator<Item = FieldType>) -> Vec<Field> {
    let own: Vec<Field> = names.iter().zip(types).map(|(n, ty)| Field::owned(n.clone(), ty)).collect();
    match leading {
        Leading::Level => std::iter::once(Field::new(LEVEL_FIELD, FieldType::Str)).chain(own).collect(),
        Leading::SpanBegin => span_begin_fields(std::iter::once(Field::new(LEVEL_FIELD, FieldType::Str)).chain(own).collect()),
    }
}

impl Typed {
    fn register(
        provider: &Provider,
        meta: &Metadata<'_>,
        leading: Leading,
        event: String,
        names: Vec<String>,
        fields: Vec<usize>,
        types: Vec<FieldType>,
    ) -> Option<Typed> {
        let tp = register(provider, meta, &event, definition_fields(leading, &names, types.iter().copied()))?;
        Some(Typed { tp, leading, event, names, fields, types, twin: OnceLock::new() })
    }

    /// Writes the record in `scratch` (after `leading`, the level),
    /// on the typed tracepoint if it fits, else on the text twin; a span
    /// begin under `parent` (a new trace under `None`), returning what it
    /// began (id 0 if nobody listened).
    pub(crate) fn write(
        &self,
        provider: &Provider,
        meta: &Metadata<'_>,
        scratch: &mut Scratch,
        leading: Option<Value<'_>>,
        parent: Option<&TraceContext>,
    ) -> Begun {
        for (&i, &ty) in self.fields.iter().zip(&self.types) {
            if ty == FieldType::Str {
                scratch.make_text(i);
            }
        }
        if scratch.fits(&self.fields, &self.types) {
            return self.write_on(&self.tp, scratch, leading, &self.types, parent);
        }
        let twin = self.twin.get_or_init(|| {
            let event = format!("{}_text", self.event);
            register(provider, meta, &event, definition_fields(self.leading, &self.names, self.types.iter().map(|_| FieldType::Str)))
        });
        let Some(twin) = twin else { return NOT_BEGUN };
        for &i in &self.fields {
            scratch.make_text(i);
        }
        let text = [FieldType::Str; MAX_CALLSITE_FIELDS];
        self.write_on(twin, scratch, leading, &text[..self.fields.len()], parent)
    }

    fn write_on(
        &self,
        tp: &DynamicTracepoint,
        scratch: &Scratch,
        leading: Option<Value<'_>>,
        types: &[FieldType],
        parent: Option<&TraceContext>,
    ) -> Begun {
        let mut values = [Value::U8(0); MAX_FIELDS];
        let mut n = 0;
        if let Some(value) = leading {
            values[0] = value;
            n = 1;
        }
        for (&i, &ty) in self.fields.iter().zip(types) {
            let Some(value) = scratch.value(i, ty) else { return NOT_BEGUN };
            if n == MAX_FIELDS {
                return NOT_BEGUN;
            }
            values[n] = value;
            n += 1;
        }
        let fixed = tp.fields().iter().map(|f| f.ty.fixed_size()).sum();
        fit_payload(&mut values[..n], fixed);
        // A failed write means the tracer went away mid-record, or the
        // kernel refused the event: neither can be told to the program.
        match self.leading {
            Leading::Level => {
                let _ = tp.emit(&values[..n]);
                NOT_BEGUN
            }
            Leading::SpanBegin => tp.begin_span_in(parent, &values[..n]).unwrap_or(NOT_BEGUN),
        }
    }
}

#[cfg(test)]
mod tests;

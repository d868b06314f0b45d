//! Spans: a stretch of time with a name and fields, as native user_events.
//!
//! A span is not a new kind of kernel object. It is two ordinary events
//! linked by an id, so `perf script` and ftrace show spans as they show any
//! event, and a reader needs no side channel. Every language writes the
//! same shapes, built here:
//!
//! | event | first field(s) | meaning |
//! |-------|----------------|---------|
//! | `<provider>_<name>` | `u64 span_begin`, `u64 trace_id_hi`, `u64 trace_id_lo`, `u64 parent_span_id` | begins the span `<provider>_<name>`, with its trace context (below); its other fields are the span's fields; a `u64 span_parent` among them names its parent span explicitly |
//! | `<provider>_span_end` | `u64 span_end` | ends the span with this id |
//! | any | `u64 span_end`, then more | ends it too; the further fields (say, an error) are added to the span's |
//! | `<provider>_span_error` | `u64 span_end`, `error` string | ends the span with this id because of an error (an exception's type name) |
//! | `<provider>_<name>` | `u64 span_start_ns`, `u64 span_duration_ns` | a completed span, reported after the fact (a GC pause): start on CLOCK_MONOTONIC, length in ns |
//! | `<provider>_otel_span` (+ `_otel_span_part`) | `u64 span_start_ns`, `u64 span_duration_ns`, then ids, scope and the OTLP protobuf | a span an OpenTelemetry SDK finished: a completed span that carries the SDK's span whole, defined in [`otel_span`](super::otel_span) |
//!
//! The kernel timestamps the begin and end events; the span lasts from one
//! to the other. A span's id is its W3C span id: 64 random bits, never 0,
//! unique in practice across processes and machines (see
//! [`trace_context`](crate::trace_context)). Handed the id, another thread,
//! or the program the process execs, may end the span: the id links the
//! two events. Nesting needs no field: on one thread, a span that begins
//! inside another and ends before it is its child.
//!
//! # Trace context
//!
//! The three fields after the id place the span in a W3C trace, so that
//! the spans of many processes make one trace:
//!
//! | field | value |
//! |-------|-------|
//! | `trace_id_hi`, `trace_id_lo` | the trace id's first and last 8 bytes, each read as a big-endian number: `{hi:016x}{lo:016x}` is the trace id as `traceparent` and tracing backends spell it |
//! | `parent_span_id` | the parent's span id, a span of this process or of another on any machine; 0 for the root of a trace |
//!
//! A trace id of 0 (both halves) means the span did not say: it is in
//! the trace of the span it nests in (thread nesting, or `span_parent`),
//! as spans were before these fields, and `parent_span_id` is 0 too. Spans
//! begun by id without a parent (`begin_span` of a
//! [`DynamicTracepoint`](crate::DynamicTracepoint), the C macros, Python,
//! Java) say nothing; spans begun with a parent (`begin_span_in`), or
//! through the Rust [`Span`] guard, say all.
//! A reader exports a span that says with exactly these ids, and derives
//! the ids of one that does not (and of begin events written before these
//! fields existed) as before.
//!
//! They are `u64`s, not a 16-byte array: numbers that `perf script`,
//! ftrace and every decoder print as they are (a `char[16]` would print as
//! text), 24 fixed bytes, and nothing to format at the begin.
//!
//! While nobody listens, beginning a span is one load (the begin event's
//! enable word) and ending it is a test of the id, which stays 0. A span
//! that is not recorded passes the context it was begun under on
//! unchanged (as OpenTelemetry's non-recording spans do), so that a
//! service nobody records does not cut the trace.
//!
//! A language names its spans after functions (`Foo.bar`, `<lambda>`,
//! `Foo$Bar.<init>`), which are not event names; [`event_name_for`] maps
//! them, by one rule for every binding.

mod guard;
mod open;

use std::borrow::Cow;

use super::field::{Field, FieldType, MAX_FIELDS};
use super::value::Value;
use crate::trace_context::TraceContext;
use crate::Error;

pub use guard::{current, Span};

/// The first field of a span's begin event: the span's id.
pub const SPAN_BEGIN_FIELD: &str = "span_begin";
/// The second field of a span's begin event: the trace id's first 8 bytes.
pub const TRACE_ID_HI_FIELD: &str = "trace_id_hi";
/// The third field of a span's begin event: the trace id's last 8 bytes.
pub const TRACE_ID_LO_FIELD: &str = "trace_id_lo";
/// The fourth field of a span's begin event: its parent's span id, in any
/// process; 0 for a root, or for a span that says nothing of its trace.
pub const PARENT_SPAN_ID_FIELD: &str = "parent_span_id";
/// The first field of a span's end event: the id of the span it ends.
pub const SPAN_END_FIELD: &str = "span_end";
/// The event (under each provider) that ends its spans: `<provider>_span_end`.
pub const SPAN_END_EVENT: &str = "span_end";
/// The event (under each provider) that ends a span because of an error:
/// `<provider>_span_error`.
pub const SPAN_ERROR_EVENT: &str = "span_error";
/// The second field of `<provider>_span_error`: what went wrong, e.g. the
/// type name of the exception that left the span.
pub const SPAN_ERROR_FIELD: &str = "error";
/// A field of a begin event that names the span's parent explicitly: the id
/// of a span of the same process that began before it. It wins over
/// nesting, so that a span begun on a worker thread (or resumed on another,
/// as async code does) hangs under the request that queued it.
pub const SPAN_PARENT_FIELD: &str = "span_parent";
/// The first field of a completed span: its start, CLOCK_MONOTONIC ns.
pub const SPAN_START_NS_FIELD: &str = "span_start_ns";
/// The second field of a completed span: its length in ns.
pub const SPAN_DURATION_NS_FIELD: &str = "span_duration_ns";

/// How many fields of a begin event the convention fills in before the
/// span's own: the id and its trace context.
pub const BEGIN_LEADING_FIELDS: usize = 4;

/// The fields every begin event starts with, in order.
pub static SPAN_BEGIN_LEADING: [Field; BEGIN_LEADING_FIELDS] = [
    Field::new(SPAN_BEGIN_FIELD, FieldType::U64),
    Field::new(TRACE_ID_HI_FIELD, FieldType::U64),
    Field::new(TRACE_ID_LO_FIELD, FieldType::U64),
    Field::new(PARENT_SPAN_ID_FIELD, FieldType::U64),
];

/// The fields of every `<provider>_span_end` event.
pub static SPAN_END_FIELDS: [Field; 1] = [Field::new(SPAN_END_FIELD, FieldType::U64)];

/// The fields of every `<provider>_span_error` event.
pub static SPAN_ERROR_FIELDS: [Field; 2] =
    [Field::new(SPAN_END_FIELD, FieldType::U64), Field::new(SPAN_ERROR_FIELD, FieldType::Str)];

/// The event name (the part after `<provider>_`) of a span named `name`.
///
/// A valid event name is returned as it is. Otherwise each run of
/// characters outside `[A-Za-z0-9_]` becomes one `_`, and such a run at
/// either end is dropped: `Foo.bar` → `Foo_bar`, `outer.<locals>.inner` →
/// `outer_locals_inner`, `<lambda>` → `lambda`, `Foo$Bar.<init>` →
/// `Foo_Bar_init`, `héllo` → `h_llo`. Distinct names may share an event
/// (`a.b` and `a_b`); their spans then differ only by where they began.
/// A name with no letter, digit or `_` at all is an
/// [`InvalidName`](Error::InvalidName) error.
pub fn event_name_for(name: &str) -> Result<Cow<'_, str>, Error> {
    if super::field::is_valid_name(name) {
        return Ok(Cow::Borrowed(name));
    }
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if valid(c) {
            if in_run && !out.is_empty() {
                out.push('_');
            }
            in_run = false;
            out.push(c);
        } else {
            in_run = true;
        }
    }
    if out.is_empty() {
        return Err(Error::InvalidName { what: "span", name: name.to_owned() });
    }
    Ok(Cow::Owned(out))
}

/// The fields of a span's begin event: the id and trace context, then the
/// span's own.
pub fn span_begin_fields(fields: Vec<Field>) -> Vec<Field> {
    let mut all = Vec::with_capacity(fields.len() + BEGIN_LEADING_FIELDS);
    all.extend(SPAN_BEGIN_LEADING.iter().cloned());
    all.extend(fields);
    all
}

/// The span's own fields among a begin event's `fields`: those after the
/// convention's leading ones; `None` if `fields` does not start with them
/// (the event begins no span).
pub fn own_fields(fields: &[Field]) -> Option<&[Field]> {
    let leading = fields.get(..BEGIN_LEADING_FIELDS)?;
    leading.iter().zip(&SPAN_BEGIN_LEADING).all(|(f, l)| f.name == l.name && f.ty == l.ty).then(|| &fields[BEGIN_LEADING_FIELDS..])
}

/// The fields of a completed span's event: start and length, then its own.
pub fn completed_span_fields(fields: Vec<Field>) -> Vec<Field> {
    let mut all = Vec::with_capacity(fields.len() + 2);
    all.push(Field::new(SPAN_START_NS_FIELD, FieldType::U64));
    all.push(Field::new(SPAN_DURATION_NS_FIELD, FieldType::U64));
    all.extend(fields);
    all
}

/// A new span id: a W3C span id, random and never 0.
#[inline]
pub fn next_span_id() -> u64 {
    crate::trace_context::new_span_id()
}

/// The leading values of a begin event: the span's id, then its trace
/// context (`context` and its parent's span id), or zeros where the span
/// says nothing of its trace.
#[inline]
pub fn begin_leading_values(id: u64, context: Option<(&TraceContext, u64)>) -> [Value<'static>; BEGIN_LEADING_FIELDS] {
    let (trace_id, parent) = context.map_or((0, 0), |(c, parent)| (c.trace_id, parent));
    [Value::U64(id), Value::U64((trace_id >> 64) as u64), Value::U64(trace_id as u64), Value::U64(parent)]
}

/// Calls `emit` with `first` followed by `rest`, built on the stack.
///
/// A binding ends a span with the id in front of the caller's values;
/// this puts it there without allocating.
#[inline]
pub fn with_leading_value<R>(
    first: Value<'_>,
    rest: &[Value<'_>],
    emit: impl FnOnce(&[Value<'_>]) -> Result<R, Error>,
) -> Result<R, Error> {
    with_leading_values(&[first], rest, emit)
}

/// Calls `emit` with `lead` followed by `rest`, built on the stack: how a
/// begin's id and context go in front of the span's own values. A check
/// of a span's own values (a binding's `validate`) passes zeros for `lead`.
#[inline]
pub fn with_leading_values<R>(
    lead: &[Value<'_>],
    rest: &[Value<'_>],
    emit: impl FnOnce(&[Value<'_>]) -> Result<R, Error>,
) -> Result<R, Error> {
    fn on_stack<const N: usize, R>(
        lead: &[Value<'_>],
        rest: &[Value<'_>],
        emit: impl FnOnce(&[Value<'_>]) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let mut all = [Value::U8(0); N];
        let n = lead.len() + rest.len();
        all[..lead.len()].copy_from_slice(lead);
        all[lead.len()..n].copy_from_slice(rest);
        emit(&all[..n])
    }
    match lead.len() + rest.len() {
        0..=4 => on_stack::<4, R>(lead, rest, emit),
        5..=8 => on_stack::<8, R>(lead, rest, emit),
        9..=16 => on_stack::<16, R>(lead, rest, emit),
        n if n <= MAX_FIELDS => on_stack::<MAX_FIELDS, R>(lead, rest, emit),
        // More values than any event can have fields: let the emit's own
        // count check name the event and the numbers (an error, so the
        // allocation costs no emit anything).
        _ => emit(&lead.iter().chain(rest).copied().collect::<Vec<_>>()),
    }
}

/// A span begun by id, with a parent: its id, and the context to hand on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Begun {
    /// The span's id, to end it with; 0 if it was not begun (nobody
    /// listened), and ending 0 writes nothing.
    pub id: u64,
    /// What to hand to the next service (`traceparent`): the span's own
    /// context; if it was not begun, its parent's, passed on unchanged
    /// (`None` under no parent).
    pub context: Option<TraceContext>,
}

/// Begins a span that says nothing of its trace: while `enabled`, takes
/// an id and has `write` emit it (and zeros for the trace context) in
/// front of `values`; returns the id, or 0 (and writes nothing) otherwise.
/// Every kind of tracepoint begins spans by id through this one rule.
#[inline]
pub(crate) fn begin_with(
    enabled: bool,
    values: &[Value<'_>],
    write: impl FnOnce(&[Value<'_>]) -> Result<(), Error>,
) -> Result<u64, Error> {
    if !enabled {
        return Ok(0);
    }
    let id = next_span_id();
    with_leading_values(&begin_leading_values(id, None), values, write)?;
    Ok(id)
}

/// Begins a span under `parent` (a new trace under `None`, or under a
/// parent that is not valid): while `enabled`, writes its new context in
/// front of `values`; otherwise writes nothing and hands `parent` on.
/// Every kind of tracepoint begins spans with a parent through this rule.
#[inline]
pub(crate) fn begin_in_with(
    enabled: bool,
    parent: Option<&TraceContext>,
    values: &[Value<'_>],
    write: impl FnOnce(&[Value<'_>]) -> Result<(), Error>,
) -> Result<Begun, Error> {
    let parent = parent.filter(|p| p.is_valid());
    if !enabled {
        return Ok(Begun { id: 0, context: parent.cloned() });
    }
    let context = TraceContext::child_of(parent);
    let lead = begin_leading_values(context.span_id, Some((&context, parent.map_or(0, |p| p.span_id))));
    with_leading_values(&lead, values, write)?;
    Ok(Begun { id: context.span_id, context: Some(context) })
}

/// Ends span `id`: while `enabled`, has `write` emit the id followed by
/// `values` (none for `span_end`, the error for `span_error`). Nothing for
/// id 0, the id of a span that was not begun.
#[inline]
pub(crate) fn end_with(
    id: u64,
    enabled: bool,
    values: &[Value<'_>],
    write: impl FnOnce(&[Value<'_>]) -> Result<(), Error>,
) -> Result<(), Error> {
    if id == 0 || !enabled {
        return Ok(());
    }
    with_leading_value(Value::U64(id), values, write)
}

#[cfg(test)]
mod tests;

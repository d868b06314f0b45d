//! Trace context through the bridge: each span `tracing` creates is
//! begun in the trace of its `tracing` parent (the explicit `parent:` of
//! `info_span!`, else the current span), as the core's span convention
//! writes it, so that a trace is the same in the events as in `tracing`'s
//! own tree.
//!
//! | a new span's parent | is |
//! |---------------------|----|
//! | a `traceparent` field on the span (a W3C header value, with a `tracestate` field if any) | that remote parent, from another process |
//! | else its nearest `tracing` ancestor this layer began (or that passed a remote parent on) | that span |
//! | else the innermost core [`usertrace::Span`] open on the thread | that span |
//! | else | none: the root of a new trace |
//!
//! The `traceparent` and `tracestate` fields are read, not written: the
//! span's begin event carries the ids instead. A header that is malformed
//! or all zeros is no parent (the span begins a new trace), never an
//! error. A span with a `traceparent` field is let through the layer's
//! filter even while nobody listens to it, so that it passes its remote
//! parent on to the spans inside it and to [`context`]: a trace is not cut
//! by a service nobody records.
//!
//! [`context`] and [`traceparent`] give the context of any `tracing` span
//! for an outgoing request: its own if this layer wrote it, else what it
//! passes on (its nearest ancestor's, or its remote parent).

use tracing_core::{Dispatch, Metadata};
use tracing_subscriber::registry::{LookupSpan, SpanRef};
use usertrace::trace_context::TRACEPARENT_HEADER;
use usertrace::{FieldType, TraceContext, Traceparent, Value};

use crate::record::{Scratch, Slot};

/// The span field that gives a span its remote parent: a `traceparent`
/// header value, recorded when the span is created.
pub const TRACEPARENT_FIELD: &str = TRACEPARENT_HEADER;
/// The span field that gives the remote parent's `tracestate`.
pub const TRACESTATE_FIELD: &str = usertrace::trace_context::TRACESTATE_HEADER;

/// The context a span hands on, kept in its extensions: its own if this
/// layer began it, else the remote parent it passes on.
#[derive(Debug, Clone)]
pub(crate) struct SpanContext(pub(crate) TraceContext);

/// Whether a field is read as context, not written.
pub(crate) fn is_context_field(name: &str) -> bool {
    name == TRACEPARENT_FIELD || name == TRACESTATE_FIELD
}

/// Whether spans of this callsite may carry a remote parent.
pub(crate) fn carries_remote_parent(meta: &Metadata<'_>) -> bool {
    meta.is_span() && meta.fields().field(TRACEPARENT_FIELD).is_some()
}

/// The remote parent the `traceparent` (and `tracestate`) fields in
/// `scratch` give, if valid.
pub(crate) fn remote_parent(meta: &Metadata<'_>, scratch: &mut Scratch) -> Option<TraceContext> {
    let text = |scratch: &mut Scratch, name: &str| -> Option<String> {
        let i = meta.fields().field(name)?.index();
        if scratch.slots.get(i).is_none_or(|s| *s == Slot::Absent) {
            return None;
        }
        scratch.make_text(i);
        match scratch.value(i, FieldType::Str)? {
            Value::Str(s) => Some(s.to_owned()),
            _ => None,
        }
    };
    let parent = TraceContext::from_traceparent(text(scratch, TRACEPARENT_FIELD)?.trim_matches([' ', '\t'])).ok()?;
    Some(match text(scratch, TRACESTATE_FIELD) {
        Some(tracestate) => parent.with_tracestate(&tracestate),
        None => parent,
    })
}

/// What `span` hands on: its own context, else its nearest ancestor's.
pub(crate) fn handed_on<'a, R: LookupSpan<'a>>(span: &SpanRef<'a, R>) -> Option<TraceContext> {
    span.scope().find_map(|s| s.extensions().get::<SpanContext>().map(|c| c.0.clone()))
}

/// The parent of the span being created, `span`: its nearest ancestor's
/// context, else the core's innermost span open on the thread.
pub(crate) fn parent_of<'a, R: LookupSpan<'a>>(span: &SpanRef<'a, R>) -> Option<TraceContext> {
    span.scope().skip(1).find_map(|s| s.extensions().get::<SpanContext>().map(|c| c.0.clone())).or_else(usertrace::span::current)
}

/// How [`context`] reaches the registry behind whatever subscriber is in
/// use: the layer hands this out through `downcast_raw`.
pub(crate) struct WithContext(pub(crate) fn(&Dispatch, &tracing_core::span::Id) -> Option<TraceContext>);

/// [`WithContext`]'s function for a layer on subscriber `S`.
pub(crate) fn lookup<S>(dispatch: &Dispatch, id: &tracing_core::span::Id) -> Option<TraceContext>
where
    S: tracing_core::Subscriber + for<'a> LookupSpan<'a>,
{
    let subscriber = dispatch.downcast_ref::<S>()?;
    handed_on(&subscriber.span(id)?)
}

/// The trace context `span` hands to the next service: its own if the
/// usertrace layer began it (a tracer listened); otherwise what it passes
/// on, its nearest ancestor's or its remote parent; `None` without any, or
/// without a usertrace layer in the subscriber.
pub fn context(span: &tracing::Span) -> Option<TraceContext> {
    span.with_subscriber(|(id, dispatch)| dispatch.downcast_ref::<WithContext>().and_then(|with| (with.0)(dispatch, id))).flatten()
}

/// The `traceparent` header value of [`context`], for an outgoing request.
pub fn traceparent(span: &tracing::Span) -> Option<Traceparent> {
    context(span).map(|c| c.traceparent())
}

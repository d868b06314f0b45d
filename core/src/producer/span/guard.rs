//! The Rust API of spans: a [`Span`] guard, which ends its span when
//! dropped, and knows its place in its trace.
//!
//! A guard's span is begun under a parent given ([`Span::begin_in`]: a
//! context from another process, from a `traceparent` header, or another
//! guard's [`Span::context`]), or else under the innermost span open on
//! the thread (see `open.rs`), or else as the root of a new trace. It is
//! then the thread's innermost open span until it ends, and it writes its
//! ids in its begin event (see [the convention](super)).

use std::mem::ManuallyDrop;

use super::open::{self, Held};
use super::{begin_in_with, end_with};
use crate::producer::tracepoint::Tracepoint;
use crate::producer::value::Value;
use crate::trace_context::{TraceContext, Traceparent};
use crate::Error;

/// The context of the innermost span open on this thread: begun here by a
/// [`Span`] guard (recorded, or not recorded and passing its parent on)
/// and not yet ended. What an outgoing request made here carries.
#[inline]
pub fn current() -> Option<TraceContext> {
    open::innermost()
}

/// An open span of a static tracepoint; dropping it ends the span.
///
/// Made by a `span` item of [`tracepoints!`](crate::tracepoints) through
/// [`span!`](crate::span!). It is `Send`: a span may end on another thread
/// than the one that began it.
#[must_use = "the span ends when this guard is dropped; bind it: `let _span = ...`"]
#[derive(Debug)]
pub struct Span {
    /// 0 when the span was not begun (nobody listened).
    id: u64,
    end: &'static Tracepoint,
    /// `None` for a guard of `span!` nobody listened to, which passes the
    /// thread's innermost span on: one tag to write and to test, the
    /// whole cost of such a guard beside its load. Dropped by hand (taken
    /// out in `finish`), so that the guard's drop glue is that test.
    placed: ManuallyDrop<Option<Placed>>,
}

/// Where a guard's span stands in its trace.
#[derive(Debug)]
struct Placed {
    /// The span's own context; if it was not begun, its parent's, passed on.
    context: TraceContext,
    /// Its slot among the thread's open spans, while it holds one.
    held: Option<Held>,
}

impl Span {
    fn placed(id: u64, end: &'static Tracepoint, context: Option<TraceContext>, held: Option<Held>) -> Span {
        Span { id, end, placed: ManuallyDrop::new(context.map(|context| Placed { context, held })) }
    }
}

impl Span {
    /// Begins a span on `begin`, whose first fields are the convention's,
    /// with the span's own `values` after them; `end` is the provider's
    /// `span_end` event. Its parent is the innermost span open on this
    /// thread; without one, it is the root of a new trace. Does nothing,
    /// and returns an inert guard, while nobody listens to `begin`.
    #[inline]
    pub fn begin(begin: &'static Tracepoint, end: &'static Tracepoint, values: &[Value<'_>]) -> Result<Span, Error> {
        if !listening(begin)? {
            return Ok(Span::inert(end));
        }
        let (begun, held) = open::begin_under_innermost(|parent| begin_in_with(true, parent, values, |all| begin.emit(all)))?;
        Ok(Span::placed(begun.id, end, begun.context, held))
    }

    /// Begins a span under `parent`, a span of this process or another
    /// (from a `traceparent` header, say); under `None`, or a parent that
    /// is not valid, as the root of a new trace. While nobody listens it
    /// writes nothing, and the guard passes `parent` on: its
    /// [`context`](Span::context), and the parent of the spans begun
    /// inside it, is `parent`'s.
    #[inline]
    pub fn begin_in(
        begin: &'static Tracepoint,
        end: &'static Tracepoint,
        parent: Option<&TraceContext>,
        values: &[Value<'_>],
    ) -> Result<Span, Error> {
        if !listening(begin)? {
            return Ok(Span::inert_in(end, parent));
        }
        Span::begin_under(begin, end, parent, values)
    }

    #[inline]
    fn begin_under(
        begin: &'static Tracepoint,
        end: &'static Tracepoint,
        parent: Option<&TraceContext>,
        values: &[Value<'_>],
    ) -> Result<Span, Error> {
        let begun = begin_in_with(true, parent, values, |all| begin.emit(all))?;
        let held = begun.context.as_ref().and_then(open::push);
        Ok(Span::placed(begun.id, end, begun.context, held))
    }

    /// A guard for a span that was not begun; dropping it emits nothing.
    #[inline]
    pub const fn inert(end: &'static Tracepoint) -> Span {
        Span { id: 0, end, placed: ManuallyDrop::new(None) }
    }

    /// A guard for a span that was not begun under `parent`: it passes
    /// `parent` on, to its own `context()` and to the spans begun inside
    /// it on this thread, until it drops.
    pub fn inert_in(end: &'static Tracepoint, parent: Option<&TraceContext>) -> Span {
        let context = parent.filter(|p| p.is_valid()).cloned();
        let held = context.as_ref().and_then(open::push);
        Span::placed(0, end, context, held)
    }

    /// The span's id as its events carry it; 0 if it was not begun.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether it was begun (a tracer listened): its events were written.
    pub fn is_recording(&self) -> bool {
        self.id != 0
    }

    /// What to hand to the next service: the span's own context; if it was
    /// not begun, the context it was begun under (its parent given, or the
    /// thread's innermost open span), passed on unchanged; `None` if there
    /// is none.
    #[inline]
    pub fn context(&self) -> Option<TraceContext> {
        match &*self.placed {
            Some(placed) => Some(placed.context.clone()),
            None => current(),
        }
    }

    /// The `traceparent` header value of [`context`](Span::context), for
    /// an outgoing request; built on the stack.
    #[inline]
    pub fn traceparent(&self) -> Option<Traceparent> {
        match &*self.placed {
            Some(placed) => Some(placed.context.traceparent()),
            None => current().map(|c| c.traceparent()),
        }
    }

    /// Ends the span now, reporting a failed write (dropping ignores it).
    pub fn end(mut self) -> Result<(), Error> {
        self.leave();
        let id = std::mem::take(&mut self.id);
        end_span(self.end, id)
    }

    /// Gives up its place: its slot among the thread's open spans, and its
    /// context.
    #[inline]
    fn leave(&mut self) {
        if let Some(placed) = self.placed.take() {
            if let Some(held) = placed.held {
                held.free();
            }
        }
    }

    /// Leaves and ends a guard that has something to do.
    #[cold]
    #[inline(never)]
    fn finish(&mut self) {
        self.leave();
        if self.id != 0 {
            // A drop cannot report; a write that failed after the begin
            // succeeded means the tracer went away, which loses nothing.
            let _ = end_span(self.end, self.id);
        }
    }
}

impl Drop for Span {
    #[inline]
    fn drop(&mut self) {
        // `placed` is `ManuallyDrop`: what it holds is dropped in `leave`.
        if self.id != 0 || self.placed.is_some() {
            self.finish();
        }
    }
}

/// Whether a tracer listens to `begin`: one load, but at the first use of
/// a static tracepoint (its word then reads as enabled, pending its
/// registration), which registers it first, so that a span is begun, and
/// its context handed on, only if its begin event is written.
#[inline]
fn listening(begin: &'static Tracepoint) -> Result<bool, Error> {
    if !begin.enabled() {
        return Ok(false);
    }
    if !begin.is_registered() {
        begin.register()?;
        return Ok(begin.enabled());
    }
    Ok(true)
}

#[inline]
fn end_span(end: &'static Tracepoint, id: u64) -> Result<(), Error> {
    end_with(id, id != 0 && end.enabled(), &[], |all| end.emit(all))
}

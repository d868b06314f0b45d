//! W3C Trace Context: the ids that join the spans of many processes and
//! machines into one trace, and the headers that carry them from service
//! to service.
//!
//! A [`TraceContext`] is what a span hands to the next service: the trace
//! id (128 bits), its own span id (64 bits, which the next service's span
//! names as its parent), the trace flags, and the `tracestate` vendors
//! added. It is read from a `traceparent` header
//! ([`TraceContext::from_traceparent`], or [`TraceContext::extract`] from a
//! request's headers) and written as one ([`TraceContext::traceparent`],
//! [`TraceContext::inject`]).
//!
//! A header that is malformed, all zeros or too long is no context: the
//! service starts a new trace, and the request goes on. Nothing here
//! panics on any input, and parsing refuses with a reason
//! ([`TraceparentError`]).
//!
//! New ids ([`new_trace_id`], [`new_span_id`]) are random, from a
//! generator per thread seeded from the kernel and again in every fork
//! child (see `ids.rs`).
//!
//! Spans carry their context in their begin events ([`span`](mod@crate::span)).

mod carrier;
mod ids;
mod traceparent;
mod tracestate;

pub use carrier::{Extractor, Injector, TRACEPARENT_HEADER, TRACESTATE_HEADER};
pub(crate) use ids::fork_epoch;
pub use ids::{new_span_id, new_trace_id};
pub use traceparent::{Traceparent, TraceparentError, MAX_TRACEPARENT_LEN, SAMPLED, TRACEPARENT_LEN};
pub use tracestate::{TraceState, MAX_TRACESTATE_INPUT, MAX_TRACESTATE_LEN, MAX_TRACESTATE_MEMBERS};

/// A span's place in a trace, as it is handed to the next service.
///
/// Valid when both ids are nonzero ([`TraceContext::is_valid`]); what
/// takes a parent treats an invalid one as none (a new trace begins).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TraceContext {
    /// The trace, 16 bytes read as a big-endian number: `{:032x}` is how
    /// `traceparent` and every tracing backend spell it.
    pub trace_id: u128,
    /// The span, 8 bytes read as a big-endian number (`{:016x}`): the
    /// parent id of the spans begun under it.
    pub span_id: u64,
    /// The trace flags; bit 0 ([`SAMPLED`]) says the caller records.
    pub flags: u8,
    /// Vendors' entries, carried on unchanged.
    pub tracestate: Option<TraceState>,
}

impl TraceContext {
    /// A context of these ids and flags, without `tracestate`; `None` if
    /// either id is 0.
    pub fn new(trace_id: u128, span_id: u64, flags: u8) -> Option<TraceContext> {
        let context = TraceContext { trace_id, span_id, flags, tracestate: None };
        context.is_valid().then_some(context)
    }

    /// The context a `traceparent` header value gives, or why it gives
    /// none (see [`TraceparentError`]).
    pub fn from_traceparent(header: &str) -> Result<TraceContext, TraceparentError> {
        let p = traceparent::parse(header)?;
        Ok(TraceContext { trace_id: p.trace_id, span_id: p.span_id, flags: p.flags, tracestate: None })
    }

    /// The same context carrying the `tracestate` header `header`
    /// (dropped if invalid: see [`TraceState::parse`]).
    pub fn with_tracestate(self, header: &str) -> TraceContext {
        TraceContext { tracestate: TraceState::parse(header), ..self }
    }

    /// The context of a request's headers: its `traceparent`, with its
    /// `tracestate`; `None` without a valid `traceparent`.
    pub fn extract<C: Extractor + ?Sized>(headers: &C) -> Option<TraceContext> {
        let traceparent = headers.get(TRACEPARENT_HEADER)?;
        let context = TraceContext::from_traceparent(carrier::trim_ows(traceparent)).ok()?;
        Some(match headers.get(TRACESTATE_HEADER) {
            Some(tracestate) => context.with_tracestate(tracestate),
            None => context,
        })
    }

    /// Writes `traceparent` (and `tracestate`, if it carries one) into the
    /// headers of an outgoing request. An invalid context writes nothing.
    pub fn inject<C: Injector + ?Sized>(&self, headers: &mut C) {
        if !self.is_valid() {
            return;
        }
        headers.set(TRACEPARENT_HEADER, self.traceparent().to_string());
        if let Some(tracestate) = &self.tracestate {
            headers.set(TRACESTATE_HEADER, tracestate.as_str().to_owned());
        }
    }

    /// Its `traceparent` header value (version `00`), on the stack.
    pub fn traceparent(&self) -> Traceparent {
        Traceparent::new(self.trace_id, self.span_id, self.flags)
    }

    /// Whether both ids are nonzero, as W3C requires of a context.
    pub fn is_valid(&self) -> bool {
        self.trace_id != 0 && self.span_id != 0
    }

    /// Whether the caller records the trace ([`SAMPLED`]).
    pub fn is_sampled(&self) -> bool {
        self.flags & SAMPLED != 0
    }

    /// The context of a new span under `parent`: its trace, flags and
    /// `tracestate`, with a new span id; under no (valid) parent, a new
    /// trace, sampled (usertrace records what it begins).
    #[inline]
    pub fn child_of(parent: Option<&TraceContext>) -> TraceContext {
        match parent.filter(|p| p.is_valid()) {
            Some(p) => TraceContext { span_id: new_span_id(), ..p.clone() },
            None => {
                let (trace_id, span_id) = ids::new_root_ids();
                TraceContext { trace_id, span_id, flags: SAMPLED, tracestate: None }
            }
        }
    }
}

impl std::str::FromStr for TraceContext {
    type Err = TraceparentError;

    fn from_str(header: &str) -> Result<TraceContext, TraceparentError> {
        TraceContext::from_traceparent(header)
    }
}

#[cfg(test)]
mod tests;

//! Flow arrows from a span to its children in other processes: a request's
//! path from service to service, in one timeline.
//!
//! A span that carries a trace context (the W3C ids its begin event wrote)
//! starts a flow named by its own span id. A span whose parent is open in
//! another process when it begins ends that flow: Perfetto draws an arrow
//! from the parent's slice to the child's. Children on the parent's own
//! thread or process need none (they nest, or share the process's tracks);
//! a second child of one parent elsewhere gets no arrow, as a flow is
//! ended by its first.
//!
//! Only the spans still open are remembered, so memory follows what is
//! open at once, as the rest of the streaming writer's does.

use rustc_hash::FxHashMap;

use crate::timeline::Span;

/// The flow ids of one slice's begin: Perfetto's `flow_ids` and
/// `terminating_flow_ids`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Flows {
    /// The flow this span starts: its own span id.
    pub(super) starts: Option<u64>,
    /// The flow this span ends: its parent's span id, open in another
    /// process.
    pub(super) ends: Option<u64>,
}

impl Flows {
    /// No flow: an end, an instant, a span in no trace.
    pub(super) const NONE: Flows = Flows { starts: None, ends: None };
}

/// The spans of traces that may still be open, by span id: their process
/// and when they end.
#[derive(Default)]
pub(super) struct RemoteParents {
    open: FxHashMap<u64, (u32, u64)>,
    /// How many were left by the last pruning: the next comes when twice
    /// as many are held.
    kept: usize,
}

impl RemoteParents {
    /// The flows of `span`'s begin, which comes now, in time order.
    pub(super) fn begin(&mut self, span: &Span) -> Flows {
        let (Some(trace), Some(id)) = (span.trace, span.id) else { return Flows::NONE };
        if trace.trace_id == 0 {
            return Flows::NONE;
        }
        self.prune(span.start_ns);
        let parent = trace.parent_span_id;
        let in_another_process = self.open.get(&parent).is_some_and(|&(pid, end_ns)| pid != span.pid && end_ns >= span.start_ns);
        self.open.insert(id, (span.pid, span.end_ns));
        Flows { starts: Some(id), ends: (parent != 0 && in_another_process).then_some(parent) }
    }

    /// Forgets the spans that ended before `now`, once enough are held.
    fn prune(&mut self, now: u64) {
        if self.open.len() >= 2 * self.kept.max(64) {
            self.open.retain(|_, &mut (_, end_ns)| end_ns >= now);
            self.kept = self.open.len();
        }
    }
}

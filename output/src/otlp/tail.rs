//! Tail-based export (`--tail`): only the traces worth keeping leave the
//! machine. A trace is what the mapping links into one `trace_id`: a
//! request's spans on every thread and process, joined across processes
//! by the ids an OpenTelemetry SDK gave them ([`super::mapping`]), and the
//! log records written inside those spans.
//!
//! # The decision
//!
//! Spans reach the sampler as they end (the mapper holds open ones), so a
//! trace's spans arrive over time. Each is held, with its trace, until the
//! trace is decided:
//!
//! - **Kept** as soon as one span breaks a rule: it lasted longer than a
//!   [`SlowSpan`] rule allows, or its status is Error (a `span_error` end,
//!   an exception, an SDK's Error status), for [`TailRule::Error`]. The
//!   trace's held spans and log records go out then, and its later ones
//!   as they come.
//! - **Dropped** once its root span (one with no parent) has ended and
//!   [`TailLimits::decision_wait`] has passed with no span breaking a
//!   rule, or once it has been held [`TailLimits::max_hold`] (its root is
//!   still open, or was recorded nowhere), or when the recording ends.
//!   Its spans and log records are counted, not sent.
//!
//! Time here is the recording's: the newest end or log time seen. A
//! decision is remembered for [`TailLimits::max_hold`] after the trace's
//! last item, so a straggler follows its trace.
//!
//! # Memory
//!
//! What is held is capped at [`TailLimits::max_held_bytes`] of encoded
//! messages. Past the cap, the traces held longest are dropped first
//! (counted as cut short): a recorder must not grow without bound because
//! one root never ends.
//!
//! Log records outside any span belong to no trace: they are sent as
//! without `--tail`.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{status, Span};
use prost::Message;
use rustc_hash::FxHashMap;

use super::mapping::{Mapped, MappedItem};
use crate::slow_span::SlowSpan;

/// What makes a trace worth exporting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TailRule {
    /// It holds a span that broke this rule (`--tail 'NAME>DURATION'`).
    Slow(SlowSpan),
    /// It holds a span whose status is Error (`--tail error`).
    Error,
}

impl TailRule {
    /// Reads `error` or `NAME>DURATION`.
    pub fn parse(text: &str) -> Result<TailRule, String> {
        if text.trim() == "error" {
            return Ok(TailRule::Error);
        }
        SlowSpan::parse(text).map(TailRule::Slow).map_err(|e| format!("{e}; or give `error` for traces with a failed span"))
    }

    fn keeps(&self, span: &Span) -> bool {
        match self {
            TailRule::Slow(rule) => {
                let duration = Duration::from_nanos(span.end_time_unix_nano.saturating_sub(span.start_time_unix_nano));
                rule.matches(&span.name, duration)
            }
            TailRule::Error => span.status.as_ref().is_some_and(|s| s.code == status::StatusCode::Error as i32),
        }
    }
}

impl std::fmt::Display for TailRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TailRule::Slow(rule) => rule.fmt(f),
            TailRule::Error => f.write_str("error"),
        }
    }
}

/// How long, and how much, the sampler holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailLimits {
    /// How long after its root span ends an unremarkable trace waits for
    /// stragglers (spans that end after their root) before it is dropped.
    pub decision_wait: Duration,
    /// The longest a trace is held undecided, from its first span or log
    /// record; also how long a decision is remembered after a trace's
    /// last item.
    pub max_hold: Duration,
    /// The most encoded bytes of spans and log records held at once.
    pub max_held_bytes: usize,
}

/// [`TailLimits::decision_wait`]'s default: 5 s.
pub const DECISION_WAIT: Duration = Duration::from_secs(5);
/// [`TailLimits::max_hold`]'s default: 60 s.
pub const MAX_HOLD: Duration = Duration::from_secs(60);
/// [`TailLimits::max_held_bytes`]'s default: 32 MiB.
pub const MAX_HELD_BYTES: usize = 32 << 20;

impl Default for TailLimits {
    fn default() -> TailLimits {
        TailLimits { decision_wait: DECISION_WAIT, max_hold: MAX_HOLD, max_held_bytes: MAX_HELD_BYTES }
    }
}

/// The rules and the limits: what `--tail` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailPolicy {
    /// A trace is kept if any rule keeps one of its spans.
    pub rules: Vec<TailRule>,
    /// What is held, and for how long.
    pub limits: TailLimits,
}

/// What became of the traces, for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TailCounts {
    /// Traces that broke a rule and were exported.
    pub traces_kept: u64,
    /// Traces that broke none and were not exported.
    pub traces_dropped: u64,
    /// Of `traces_dropped`, those dropped early because the held bytes
    /// reached their cap.
    pub traces_cut_short: u64,
    /// Spans of dropped traces.
    pub spans_dropped: u64,
    /// Log records of dropped traces.
    pub logs_dropped: u64,
    /// The events those spans and log records were made of.
    pub events_dropped: u64,
    /// The most encoded bytes held at once.
    pub peak_held_bytes: usize,
}

type TraceId = [u8; 16];

/// One held span or log record, with the resource of its batch.
enum Item {
    Span(Arc<Resource>, MappedItem<Span>),
    Log(Arc<Resource>, MappedItem<LogRecord>),
}

struct Held {
    /// When its first item ended (Unix ns).
    first_ns: u64,
    /// When its root span ended, if it has.
    root_end_ns: Option<u64>,
    items: Vec<Item>,
    bytes: usize,
}

#[derive(Clone, Copy)]
struct Decided {
    keep: bool,
    last_ns: u64,
}

/// Holds each trace's spans until the trace is kept or dropped.
pub struct TailSampler {
    policy: TailPolicy,
    held: FxHashMap<TraceId, Held>,
    decided: FxHashMap<TraceId, Decided>,
    held_bytes: usize,
    /// The recording's time: the newest item seen (Unix ns).
    now_ns: u64,
    counts: TailCounts,
}

impl TailSampler {
    /// A sampler that keeps what `policy` asks for.
    pub fn new(policy: TailPolicy) -> TailSampler {
        TailSampler { policy, held: FxHashMap::default(), decided: FxHashMap::default(), held_bytes: 0, now_ns: 0, counts: TailCounts::default() }
    }

    /// What became of the traces so far.
    pub fn counts(&self) -> TailCounts {
        self.counts
    }

    /// How many traces are held undecided.
    pub fn held_traces(&self) -> usize {
        self.held.len()
    }

    /// Takes a mapped batch and gives back what to send now: the items of
    /// kept traces (held ones included) and log records outside any trace.
    pub fn admit(&mut self, batch: Mapped) -> Mapped {
        let Mapped { resources, spans, logs, declarations } = batch;
        let resources: FxHashMap<u32, Arc<Resource>> = resources.into_iter().map(|(pid, r)| (pid, Arc::new(r))).collect();
        let resource_of = |pid: u32| resources.get(&pid).map_or_else(|| Arc::new(Resource::default()), Arc::clone);
        let mut out = Outbox::default();
        for s in spans {
            let resource = resource_of(s.pid);
            self.now_ns = self.now_ns.max(s.item.end_time_unix_nano);
            let Ok(trace_id) = TraceId::try_from(s.item.trace_id.as_slice()) else {
                out.push(Item::Span(resource, s));
                continue;
            };
            let is_root = s.item.parent_span_id.is_empty();
            let keeps = self.policy.rules.iter().any(|r| r.keeps(&s.item));
            let end_ns = s.item.end_time_unix_nano;
            self.take(trace_id, Item::Span(resource, s), &mut out);
            if let Some(held) = self.held.get_mut(&trace_id) {
                if is_root {
                    held.root_end_ns = Some(held.root_end_ns.map_or(end_ns, |t| t.max(end_ns)));
                }
                if keeps {
                    self.decide(trace_id, true, &mut out);
                }
            }
        }
        for l in logs {
            let resource = resource_of(l.pid);
            self.now_ns = self.now_ns.max(l.item.time_unix_nano);
            match TraceId::try_from(l.item.trace_id.as_slice()) {
                Ok(trace_id) => self.take(trace_id, Item::Log(resource, l), &mut out),
                Err(_) => out.push(Item::Log(resource, l)),
            }
        }
        self.expire();
        self.enforce_cap();
        // Resource events are sent, as far as they go, with what is sent now.
        Mapped { declarations, ..out.into_mapped() }
    }

    /// The recording ended: every trace still held broke no rule.
    pub fn finish(&mut self) {
        let undecided: Vec<TraceId> = self.held.keys().copied().collect();
        let mut nothing = Outbox::default();
        for trace_id in undecided {
            self.decide(trace_id, false, &mut nothing);
        }
    }

    /// Sends, drops or holds one item by its trace's decision.
    fn take(&mut self, trace_id: TraceId, item: Item, out: &mut Outbox) {
        if let Some(decided) = self.decided.get_mut(&trace_id) {
            decided.last_ns = decided.last_ns.max(item.time_ns());
            if decided.keep {
                out.push(item);
            } else {
                self.counts.count_dropped(&item);
            }
            return;
        }
        let bytes = item.encoded_len();
        let now_ns = self.now_ns;
        let held = self.held.entry(trace_id).or_insert_with(|| Held { first_ns: now_ns, root_end_ns: None, items: Vec::new(), bytes: 0 });
        held.items.push(item);
        held.bytes += bytes;
        self.held_bytes += bytes;
        self.counts.peak_held_bytes = self.counts.peak_held_bytes.max(self.held_bytes);
    }

    /// Decides a held trace: its items go out, or are counted dropped.
    fn decide(&mut self, trace_id: TraceId, keep: bool, out: &mut Outbox) {
        let Some(held) = self.held.remove(&trace_id) else { return };
        self.held_bytes -= held.bytes;
        let last_ns = held.items.iter().map(Item::time_ns).max().unwrap_or(self.now_ns);
        if keep {
            self.counts.traces_kept += 1;
            for item in held.items {
                out.push(item);
            }
        } else {
            self.counts.traces_dropped += 1;
            for item in &held.items {
                self.counts.count_dropped(item);
            }
        }
        self.decided.insert(trace_id, Decided { keep, last_ns });
    }

    /// Drops the traces whose wait is over, and forgets old decisions.
    fn expire(&mut self) {
        let now = self.now_ns;
        let (wait, hold) = (nanos(self.policy.limits.decision_wait), nanos(self.policy.limits.max_hold));
        let over: Vec<TraceId> = self
            .held
            .iter()
            .filter(|(_, h)| h.root_end_ns.is_some_and(|end| now.saturating_sub(end) > wait) || now.saturating_sub(h.first_ns) > hold)
            .map(|(id, _)| *id)
            .collect();
        let mut nothing = Outbox::default();
        for trace_id in over {
            self.decide(trace_id, false, &mut nothing);
        }
        self.decided.retain(|_, d| now.saturating_sub(d.last_ns) <= hold);
    }

    /// Drops the traces held longest while the held bytes exceed the cap.
    fn enforce_cap(&mut self) {
        if self.held_bytes <= self.policy.limits.max_held_bytes {
            return;
        }
        let mut oldest: Vec<(u64, TraceId)> = self.held.iter().map(|(id, h)| (h.first_ns, *id)).collect();
        oldest.sort_unstable();
        let mut nothing = Outbox::default();
        for (_, trace_id) in oldest {
            if self.held_bytes <= self.policy.limits.max_held_bytes {
                break;
            }
            self.decide(trace_id, false, &mut nothing);
            self.counts.traces_cut_short += 1;
        }
    }
}

impl TailCounts {
    fn count_dropped(&mut self, item: &Item) {
        match item {
            Item::Span(_, s) => {
                self.spans_dropped += 1;
                self.events_dropped += s.events;
            }
            Item::Log(_, l) => {
                self.logs_dropped += 1;
                self.events_dropped += l.events;
            }
        }
    }
}

impl Item {
    fn time_ns(&self) -> u64 {
        match self {
            Item::Span(_, s) => s.item.end_time_unix_nano,
            Item::Log(_, l) => l.item.time_unix_nano,
        }
    }

    fn encoded_len(&self) -> usize {
        match self {
            Item::Span(_, s) => s.item.encoded_len(),
            Item::Log(_, l) => l.item.encoded_len(),
        }
    }
}

/// What goes out of one `admit`, gathered back into a [`Mapped`].
#[derive(Default)]
struct Outbox {
    mapped: Mapped,
}

impl Outbox {
    fn push(&mut self, item: Item) {
        let (pid, resource) = match &item {
            Item::Span(r, s) => (s.pid, r),
            Item::Log(r, l) => (l.pid, r),
        };
        // One resource per process per request: its first item's. (A held
        // item's process may have been renamed by an exec since; the
        // request names it once, as it was then.)
        self.mapped.resources.entry(pid).or_insert_with(|| Resource::clone(resource));
        match item {
            Item::Span(_, s) => self.mapped.spans.push(s),
            Item::Log(_, l) => self.mapped.logs.push(l),
        }
    }

    fn into_mapped(self) -> Mapped {
        self.mapped
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;

//! One model of a recording, built from [`Record`]s, that every viewer
//! output draws: processes and threads with their best names, spans placed
//! on thread or process-level tracks, instants, and lost-record markers.
//!
//! # The span convention
//!
//! Spans travel as ordinary user_events fields, so any producer can emit
//! them and perf sees plain events:
//!
//! - a **span begin** is an event whose *first* field is `span_begin`: a
//!   nonzero unsigned id, unique among the open spans of the emitting
//!   process. The span's name is the event's name; its args are the
//!   event's other fields.
//! - a **span end** is an event whose first field is `span_end`, the id of
//!   the span it ends in the same process. Its other fields (an `error`,
//!   say) are added to the span's args.
//! - a **completed span**, known only after the fact (a JVM GC pause), is
//!   an event whose first two fields are `span_start_ns` and
//!   `span_duration_ns` (CLOCK_MONOTONIC). It did not run on the emitting
//!   thread, so it goes on a process-level (async) track.
//!
//! EventHeader events (decoded by the consumer) are named
//! `<provider>:<event>`; an activity's start and stop carry `span_begin`
//! and `span_end` from the consumer, and a span written by OpenTelemetry's
//! user_events trace exporter is a completed span under its own name
//! (`eventheader.rs`).
//!
//! A span that begins and ends on one thread, nesting properly with that
//! thread's other spans, is a slice on the thread's track; any other span
//! (ended on another thread, or interleaved with its neighbours) goes on a
//! process-level async track. A span still open when its thread exits is
//! closed then with the arg `unfinished = "thread exited"`; when its
//! process exits, `"process exited"`; at the end of the recording,
//! `"recording ended"`. An end whose begin was not recorded (lost, or
//! before the recording started) is counted in
//! [`Timeline::orphan_ends`] and shown as an instant. Every other event
//! is an instant on its thread, but a scheduler record.
//!
//! # Scheduler records
//!
//! The kernel's `sched_switch`, `sched_waking` and `sched_migrate_task`
//! (`usertrace record --sched`) are not instants, nor events of a process
//! or thread: they give each span begun on a thread a [`SchedSummary`] of
//! where its time went, on a CPU, waiting for one, or blocked, and who
//! woke it ([`Span::sched`]); and they are kept as they are, as
//! [`SchedEvent`]s ([`Timeline::sched`]), for a viewer that draws each
//! thread's states (the Perfetto trace). A recording without them lays out
//! as it always did. The model, the rule that tells them from user events, and
//! the limits are in [`sched`].
//!
//! A forked child's spans are its own (another pid). Across exec a
//! process keeps its pid and its spans, and takes the new program's name.
//!
//! # Built whole, or streamed
//!
//! [`Timeline::build`] (and [`TimelineBuilder`]) lay out a recording in
//! memory. A [`TimelineStream`] lays out the same spans, instants and
//! lost markers as [`TimelineItems`], in the time order the viewer
//! outputs write them, holding only what is open and a fixed budget: what
//! `usertrace convert` uses, for recordings of any size.

mod build;
mod codec;
mod eventheader;
pub mod sched;
mod sched_event;
mod spool;
mod stream;

pub use build::TimelineBuilder;
pub use sched::{is_sched_record, SchedRecord, SchedSummary, ThreadState, Waker, MAX_WAKERS, TOP_WAKERS};
pub use sched_event::{SchedEvent, SchedEventKind};
pub use eventheader::{otel_attributes, otel_failure, otel_ids, otel_kind, OtelIds};
pub use stream::{Item, SpanEnd, TimelineItems, TimelineStream};

/// The name `e` is counted under: its tracepoint's, or for an EventHeader
/// event (many share one tracepoint) `<provider>:<event>`.
pub fn event_name(e: &EventRecord) -> Cow<'_, str> {
    eventheader::event_name(e).map_or(Cow::Borrowed(e.event.as_str()), Cow::Owned)
}

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::record::{EventRecord, Record, StackFrame, Value};

/// The span convention's field names, as the core defines them for every
/// language's producer (see `usertrace::span`).
pub use usertrace::span::{
    PARENT_SPAN_ID_FIELD as PARENT_SPAN_ID, SPAN_BEGIN_FIELD as SPAN_BEGIN, SPAN_DURATION_NS_FIELD as SPAN_DURATION_NS,
    SPAN_END_FIELD as SPAN_END, SPAN_START_NS_FIELD as SPAN_START_NS, TRACE_ID_HI_FIELD as TRACE_ID_HI,
    TRACE_ID_LO_FIELD as TRACE_ID_LO,
};
/// The arg that marks a span closed by the timeline rather than its end.
pub const UNFINISHED: &str = "unfinished";

/// A recording, laid out for viewing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// Processes that emitted at least one event, by pid.
    pub processes: BTreeMap<u32, Process>,
    /// Their threads that emitted events, by tid.
    pub threads: BTreeMap<u32, Thread>,
    /// Every span, thread and async, by start time.
    pub spans: Vec<Span>,
    /// Events that are not spans, by time.
    pub instants: Vec<Instant>,
    /// Where records were lost, by time.
    pub lost: Vec<LostMarker>,
    /// The scheduler records, by time (none from a builder that keeps no
    /// instants).
    pub sched: Vec<SchedEvent>,
    /// Span ends whose begin was not recorded.
    pub orphan_ends: u64,
    /// The first timestamp of the recording (0 if it is empty).
    pub start_ns: u64,
    /// The last timestamp of the recording (0 if it is empty).
    pub end_ns: u64,
}

impl Timeline {
    /// Lays out `records` (in time order; they are sorted if not). A
    /// [`TimelineBuilder`] takes them one at a time instead.
    pub fn build(records: &[Record]) -> Timeline {
        build::build(records)
    }

    /// The spans on `tid`'s own track, by start.
    pub fn thread_spans(&self, tid: u32) -> impl Iterator<Item = &Span> {
        self.spans.iter().filter(move |s| s.placement.is_thread() && s.tid == tid)
    }

    /// The spans on process-level tracks of `pid`, by start.
    pub fn async_spans(&self, pid: u32) -> impl Iterator<Item = &Span> {
        self.spans.iter().filter(move |s| !s.placement.is_thread() && s.pid == pid)
    }
}

/// A process that emitted events.
#[derive(Debug, Clone, PartialEq)]
pub struct Process {
    /// Its id.
    pub pid: u32,
    /// The best name known: the executable's file name from the last
    /// exec seen, else the first word of its command line, else the
    /// process name its events carried.
    pub name: String,
    /// The full path of its executable, where known.
    pub executable: Option<String>,
    /// Its command line, where known.
    pub command_line: Option<Vec<String>>,
    /// The container it runs in, where known.
    pub container_id: Option<String>,
    /// The OpenTelemetry resource it declares (`service.name` and the
    /// rest); empty if none.
    pub resource: BTreeMap<String, String>,
    /// The Kubernetes pod it runs in (its uid), where known.
    pub pod_uid: Option<String>,
    /// How many events it emitted.
    pub events: u64,
}

impl Process {
    /// The name a timeline shows: its service and its program,
    /// `checkout (python3.12)`, where it declares a `service.name` other
    /// than its program's name; else its best name.
    pub fn shown_name(&self) -> Cow<'_, str> {
        match self.resource.get(usertrace::resource::SERVICE_NAME_KEY) {
            Some(service) if *service != self.name && !self.name.is_empty() => Cow::Owned(format!("{service} ({})", self.name)),
            Some(service) => Cow::Borrowed(service.as_str()),
            None => Cow::Borrowed(&self.name),
        }
    }
}

/// A thread that emitted events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// Its id.
    pub tid: u32,
    /// Its process.
    pub pid: u32,
    /// Its latest name (comm).
    pub name: String,
}

/// Where a span is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// On its thread's track, at this nesting depth (0: outermost).
    Thread {
        /// How many spans enclose it on the thread.
        depth: u32,
    },
    /// On a process-level track; spans of one lane never overlap.
    Async {
        /// The lane within the process, 0 first.
        lane: u32,
    },
}

impl Placement {
    /// Whether it is on a thread's track.
    pub fn is_thread(&self) -> bool {
        matches!(self, Placement::Thread { .. })
    }
}

/// Something that took time.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// The process it belongs to.
    pub pid: u32,
    /// The thread that began it (for a completed span, that reported it).
    pub tid: u32,
    /// Its name: the begin event's name.
    pub name: String,
    /// When it began.
    pub start_ns: u64,
    /// When it ended (or was closed, see [`Span::unfinished`]).
    pub end_ns: u64,
    /// The begin's other fields, then the end's, then `unfinished` if set.
    pub args: Vec<(String, Value)>,
    /// Where it is drawn.
    pub placement: Placement,
    /// The span id of a begin/end pair; `None` for a completed span.
    pub id: Option<u64>,
    /// Why the timeline closed it, if its end was not recorded.
    pub unfinished: Option<&'static str>,
    /// Where its time went on its begin thread, if the recording has
    /// scheduler records of that thread (see [`SchedSummary`]).
    pub sched: Option<SchedSummary>,
    /// The begin event's user stack, innermost first, where recorded.
    pub stack: Vec<StackFrame>,
    /// The trace context its begin event carried; `None` for a begin
    /// written before the convention had one (and for a completed span).
    pub trace: Option<SpanTrace>,
}

/// The trace context of a span's begin event: `trace_id_hi`,
/// `trace_id_lo` and `parent_span_id`, after its id (see the core's
/// `usertrace::span`). They are not among the span's args.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanTrace {
    /// The trace id; 0 when the span did not say (it is in the trace of
    /// the span it nests in).
    pub trace_id: u128,
    /// The parent's span id, in any process; 0 for a root, or when the
    /// span did not say.
    pub parent_span_id: u64,
}

impl SpanTrace {
    /// The trace context among a begin event's `fields` (its id first),
    /// and where the span's own args start: after the context, or after
    /// the id of a begin written before spans carried one.
    pub fn of_begin(fields: &[(String, Value)]) -> (Option<SpanTrace>, usize) {
        let u64_named = |i: usize, name: &str| fields.get(i).filter(|(n, _)| n == name).and_then(|(_, v)| v.as_u64());
        match (u64_named(1, TRACE_ID_HI), u64_named(2, TRACE_ID_LO), u64_named(3, PARENT_SPAN_ID)) {
            (Some(hi), Some(lo), Some(parent_span_id)) => {
                (Some(SpanTrace { trace_id: u128::from(hi) << 64 | u128::from(lo), parent_span_id }), 4)
            }
            _ => (None, 1),
        }
    }

    /// Whether the span said which trace it is in (and so its parent).
    pub fn is_said(&self) -> bool {
        self.trace_id != 0
    }
}

impl Span {
    /// How long it took.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }
}

/// An event that is not a span, or a span end without its begin.
#[derive(Debug, Clone, PartialEq)]
pub struct Instant {
    /// When it was emitted.
    pub time_ns: u64,
    /// Its process.
    pub pid: u32,
    /// Its thread.
    pub tid: u32,
    /// The event's name.
    pub name: String,
    /// Its fields, typed; an undecodable payload gives `error`.
    pub args: Vec<(String, Value)>,
    /// Its user stack, innermost first, where recorded.
    pub stack: Vec<StackFrame>,
}

/// Records were lost here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostMarker {
    /// When the loss was reported.
    pub time_ns: u64,
    /// The CPU whose ring was full.
    pub cpu: u32,
    /// How many records.
    pub count: u64,
    /// Task records rather than events.
    pub sideband: bool,
    /// `lost 12 events on cpu 3` (or `task records`).
    pub name: String,
}

/// The track name of lost markers in every viewer.
pub const LOST_TRACK: &str = "usertrace: lost events";

#[cfg(test)]
pub(crate) mod busy_recording;
#[cfg(test)]
mod tests;

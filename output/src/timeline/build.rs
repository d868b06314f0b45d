//! Building a [`Timeline`] from records: matching span begins and ends,
//! closing what exits or the end of the recording leaves open, and placing
//! each span on a thread track (at its depth) or a process-level lane.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::vec::Drain;

use super::eventheader;
use super::sched::{SchedRecord, SchedTracker, SpanSched};
use super::sched_event::SchedEvent;
use super::{
    Instant, LostMarker, Placement, Process, Span, SpanTrace, Thread, Timeline, SPAN_BEGIN, SPAN_DURATION_NS, SPAN_END,
    SPAN_START_NS, UNFINISHED,
};
use rustc_hash::FxHashMap;
use crate::record::{EventRecord, Record, StackFrame, Value};

pub(super) fn build(records: &[Record]) -> Timeline {
    let mut b = TimelineBuilder::new();
    for record in Record::in_time_order(records).iter() {
        b.push(record);
    }
    b.finish()
}

/// Builds a [`Timeline`] from records given one at a time, as they are
/// read, so that a recording need not be held whole: what it holds is the
/// timeline itself (spans, instants, processes and threads) and the spans
/// still open.
///
/// Records are laid out in the order given, which for a recording is time
/// order (a JSON-lines file keeps it); [`Timeline::build`] sorts a slice
/// that is not.
///
/// A caller that folds each span as it closes takes them out with
/// [`TimelineBuilder::drain_closed_spans`], so that they are not held; a
/// [`TimelineBuilder::lean`] builder holds nothing else that grows with the
/// recording but its processes.
#[derive(Default)]
pub struct TimelineBuilder {
    b: Builder,
    start_ns: Option<u64>,
}

impl TimelineBuilder {
    /// An empty timeline.
    pub fn new() -> TimelineBuilder {
        TimelineBuilder::default()
    }

    /// A builder that keeps no instants (events that are not spans): for
    /// what reads only spans, processes and losses (the report), so that
    /// memory does not grow with every plain event.
    pub fn without_instants() -> TimelineBuilder {
        TimelineBuilder { b: Builder { drop_instants: true, ..Builder::default() }, ..TimelineBuilder::default() }
    }

    /// A builder for a caller that takes each span as it closes
    /// ([`TimelineBuilder::drain_closed_spans`]) and needs of the rest only
    /// the processes and the counts (the report). It holds the spans still
    /// open, without their args, and every process; no instants, no lost
    /// markers (their records are the caller's to count), no threads, and
    /// no span args: its spans and its [`Timeline`] have none of these.
    pub fn lean() -> TimelineBuilder {
        TimelineBuilder { b: Builder { drop_instants: true, lean: true, ..Builder::default() }, ..TimelineBuilder::default() }
    }

    /// Adds the next record.
    pub fn push(&mut self, record: &Record) {
        let b = &mut self.b;
        self.start_ns.get_or_insert(record.time_ns());
        b.end_ns = b.end_ns.max(record.time_ns());
        match record {
            Record::Event(e) => b.event(e),
            Record::Process(p) => {
                let info = b.processes.entry(p.pid).or_default();
                if p.executable.is_some() {
                    info.executable.clone_from(&p.executable);
                }
                if p.command_line.is_some() {
                    info.command_line.clone_from(&p.command_line);
                }
                if p.container_id.is_some() {
                    info.container_id.clone_from(&p.container_id);
                }
                if !p.resource.is_empty() {
                    info.resource.clone_from(&p.resource);
                }
                if p.pod_uid.is_some() {
                    info.pod_uid.clone_from(&p.pod_uid);
                }
                // A new program: its name, not the old one's.
                if p.executable.is_some() || p.command_line.is_some() {
                    info.event_name = None;
                }
            }
            // Wall-clock time is for exports; a timeline keeps the
            // recording's own clock.
            Record::Clock(_) => {}
            Record::Exit(x) if x.tid == x.pid => {
                b.process_exited(x.pid, x.time_ns);
                b.sched.forget(x.tid);
            }
            Record::Exit(x) => {
                b.close_thread(x.tid, x.time_ns, THREAD_EXITED);
                b.sched.forget(x.tid);
            }
            Record::Lost(_) if b.lean => {}
            Record::Lost(l) => {
                let what = if l.sideband { "task records" } else { "events" };
                b.lost.push(LostMarker {
                    time_ns: l.time_ns,
                    cpu: l.cpu,
                    count: l.count,
                    sideband: l.sideband,
                    name: format!("lost {} {what} on cpu {}", l.count, l.cpu),
                });
            }
        }
    }

    /// The spans closed since the last call, in the order they closed,
    /// taken out of the builder: what [`TimelineBuilder::finish`] lays out
    /// is what is left. They are not laid out, as that needs every span:
    /// `placement` is `Thread { depth: 0 }` for a span that goes on its
    /// thread's track, `Async { lane: 0 }` for one that does not.
    pub fn drain_closed_spans(&mut self) -> impl Iterator<Item = Span> + '_ {
        self.b.closed.drain(..).map(|c| {
            let mut span = c.span;
            if !c.on_thread {
                span.placement = Placement::Async { lane: 0 };
            }
            span
        })
    }

    /// Closes what is still open (at the last record's time) and lays out
    /// the spans.
    pub fn finish(self) -> Timeline {
        self.b.finish(self.start_ns.unwrap_or(0))
    }

    /// What the records so far have decided, taken out of the builder:
    /// the spans closed (in the order they closed), the instants and the
    /// lost markers and the scheduler events (in record order). For
    /// [`super::TimelineStream`], which sorts them into the order the
    /// writers write.
    pub(super) fn take_decided(&mut self) -> Decided<'_> {
        let b = &mut self.b;
        Decided { closed: b.closed.drain(..), instants: b.instants.drain(..), lost: b.lost.drain(..), sched: b.sched_events.drain(..) }
    }

    /// Closes what is still open, at the last record's time; its spans are
    /// then [`TimelineBuilder::take_decided`]'s.
    pub(super) fn close_open(&mut self) {
        self.b.close_open();
    }

    /// The timeline without its spans: processes, threads and counts, and
    /// whatever instants and lost markers were not taken.
    pub(super) fn into_tables(self) -> Timeline {
        self.b.tables(self.start_ns.unwrap_or(0))
    }
}

/// What [`TimelineBuilder::take_decided`] takes out.
pub(super) struct Decided<'a> {
    pub(super) closed: Drain<'a, Closed>,
    pub(super) instants: Drain<'a, (u64, Instant)>,
    pub(super) lost: Drain<'a, LostMarker>,
    pub(super) sched: Drain<'a, SchedEvent>,
}

/// A span begun and not yet ended.
struct Open {
    pid: u32,
    tid: u32,
    name: String,
    start_ns: u64,
    args: Vec<(String, Value)>,
    id: u64,
    begin_seq: u64,
    sched: SpanSched,
    /// The begin event's user stack.
    stack: Vec<StackFrame>,
    trace: Option<SpanTrace>,
}

/// A begin's args, with room for an end's few (a status, an error), so
/// that adding them at the end seldom moves the begin's.
fn span_args(begin: &[(String, Value)]) -> Vec<(String, Value)> {
    let mut args = Vec::with_capacity(begin.len() + 2);
    args.extend_from_slice(begin);
    args
}

/// A span with its end, before placement.
pub(super) struct Closed {
    pub(super) span: Span,
    /// Whether it goes on its thread's track (else on a process lane).
    pub(super) on_thread: bool,
    /// The order of its begin among begins, closes and instants (for a
    /// completed span, of its report).
    pub(super) begin_seq: u64,
    /// The order of its close.
    pub(super) close_seq: u64,
}

/// Why the timeline closed a span whose end was not recorded: the
/// `unfinished` arg's values.
pub(super) const REUSED: &str = "span id reused before its end";
pub(super) const THREAD_EXITED: &str = "thread exited";
pub(super) const PROCESS_EXITED: &str = "process exited";
pub(super) const RECORDING_ENDED: &str = "recording ended";
/// Every reason, so that one can be written as its index and read back.
pub(super) const REASONS: [&str; 4] = [REUSED, THREAD_EXITED, PROCESS_EXITED, RECORDING_ENDED];

#[derive(Default)]
struct ProcessInfo {
    executable: Option<String>,
    command_line: Option<Vec<String>>,
    container_id: Option<String>,
    resource: BTreeMap<String, String>,
    /// The `service.name` its OpenTelemetry SDK's latest resource declared:
    /// it wins over `resource`'s.
    sdk_service_name: Option<String>,
    pod_uid: Option<String>,
    /// The `process` name of its latest event since the last exec seen.
    event_name: Option<String>,
    events: u64,
}

#[derive(Default)]
struct Builder {
    processes: BTreeMap<u32, ProcessInfo>,
    threads: BTreeMap<u32, Thread>,
    open: FxHashMap<(u32, u64), Open>,
    /// Per thread, the keys of its open spans, innermost last.
    stacks: FxHashMap<u32, Vec<(u32, u64)>>,
    closed: Vec<Closed>,
    /// With the order of each among begins and closes.
    instants: Vec<(u64, Instant)>,
    lost: Vec<LostMarker>,
    orphan_ends: u64,
    /// Counts begins, closes and instants, to tell nesting apart when times
    /// are equal.
    seq: u64,
    end_ns: u64,
    /// Instants are counted (as orphan ends) but not kept.
    drop_instants: bool,
    /// No lost markers, threads or span args are kept (see
    /// [`TimelineBuilder::lean`]).
    lean: bool,
    /// Every thread's scheduling state, for the spans' summaries.
    sched: SchedTracker,
    /// The scheduler records as viewers draw them (none when instants are
    /// dropped: what drops them draws no thread states).
    sched_events: Vec<SchedEvent>,
}

/// What an event is under the span convention.
enum Kind {
    Begin(u64),
    End(u64),
    /// A span known after the fact; its args are the event's fields from
    /// `args_from` on.
    Completed { start_ns: u64, duration_ns: u64, args_from: usize },
    Plain,
}

fn kind(e: &EventRecord) -> Kind {
    let nonzero = |v: &Value| v.as_u64().filter(|&id| id != 0);
    match e.fields.as_slice() {
        [(first, v), ..] if first == SPAN_BEGIN => nonzero(v).map_or(Kind::Plain, Kind::Begin),
        [(first, v), ..] if first == SPAN_END => nonzero(v).map_or(Kind::Plain, Kind::End),
        [(start, s), (duration, d), ..] if start == SPAN_START_NS && duration == SPAN_DURATION_NS => match (s.as_u64(), d.as_u64()) {
            (Some(start_ns), Some(duration_ns)) => Kind::Completed { start_ns, duration_ns, args_from: 2 },
            _ => Kind::Plain,
        },
        _ => match eventheader::completed_span(e) {
            Some((start_ns, duration_ns)) => Kind::Completed { start_ns, duration_ns, args_from: 0 },
            None => Kind::Plain,
        },
    }
}

/// The name of `e`'s span or instant: its tracepoint's, unless it is an
/// EventHeader event, which names itself.
fn name_of(e: &EventRecord) -> String {
    eventheader::timeline_name(e).unwrap_or_else(|| e.event.clone())
}

impl Builder {
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn event(&mut self, e: &EventRecord) {
        // A scheduler record is about the threads it names, not an event
        // of the task it ran in (often another program, or the idle task).
        if let Some(record) = SchedRecord::of(e) {
            self.sched_record(e, record);
            return;
        }
        // A part of an OpenTelemetry span's protobuf is not an event of
        // its own: its span is the head event, with ids, name and times.
        if is_otel_part(e) {
            return;
        }
        // An SDK's resource names its process (the latest wins, over what
        // its environment said); it is no event of the timeline.
        if crate::otlp::sdk_resource::is_otel_resource(e) {
            let info = self.processes.entry(e.pid).or_default();
            info.events += 1;
            if let Some(name) = crate::otlp::sdk_resource::declared_service_name(e) {
                info.sdk_service_name = Some(name.to_owned());
            }
            return;
        }
        let info = self.processes.entry(e.pid).or_default();
        info.events += 1;
        // Compared first: names rarely change, so most events copy none.
        if (info.event_name.is_none() || e.tid == e.pid) && info.event_name.as_deref() != Some(e.process.as_str()) {
            info.event_name = Some(e.process.clone());
        }
        if !self.lean {
            let thread = self.threads.entry(e.tid).or_insert_with(|| Thread { tid: e.tid, pid: e.pid, name: String::new() });
            thread.pid = e.pid;
            if thread.name != e.comm {
                thread.name.clone_from(&e.comm);
            }
        }
        match kind(e) {
            Kind::Begin(id) => {
                if self.open.contains_key(&(e.pid, id)) {
                    self.close((e.pid, id), e.time_ns, None, &[], Some(REUSED));
                }
                let begin_seq = self.next_seq();
                let (trace, args_from) = SpanTrace::of_begin(&e.fields);
                let open = Open {
                    pid: e.pid,
                    tid: e.tid,
                    name: name_of(e),
                    start_ns: e.time_ns,
                    args: if self.lean { Vec::new() } else { span_args(&e.fields[args_from..]) },
                    trace,
                    id,
                    begin_seq,
                    sched: SpanSched::begin(&self.sched, e.tid, e.time_ns),
                    stack: e.stack.clone(),
                };
                self.open.insert((e.pid, id), open);
                self.stacks.entry(e.tid).or_default().push((e.pid, id));
            }
            Kind::End(id) if self.open.contains_key(&(e.pid, id)) => {
                self.close((e.pid, id), e.time_ns, Some(e.tid), &e.fields[1..], None);
            }
            Kind::End(_) => {
                self.orphan_ends += 1;
                self.instant(e);
            }
            Kind::Completed { start_ns, duration_ns, args_from } => {
                let seq = self.next_seq();
                self.closed.push(Closed {
                    span: Span {
                        pid: e.pid,
                        tid: e.tid,
                        name: name_of(e),
                        start_ns,
                        end_ns: start_ns.saturating_add(duration_ns),
                        args: if self.lean { Vec::new() } else { e.fields[args_from..].to_vec() },
                        placement: Placement::Async { lane: 0 },
                        id: None,
                        unfinished: None,
                        sched: None,
                        stack: e.stack.clone(),
                        trace: None,
                    },
                    on_thread: false,
                    begin_seq: seq,
                    close_seq: seq,
                });
            }
            Kind::Plain => self.instant(e),
        }
    }

    /// Brings the threads' states up to the record, and counts a waker in
    /// every span open on the thread it woke.
    fn sched_record(&mut self, e: &EventRecord, record: SchedRecord) {
        if !self.drop_instants {
            self.sched_events.extend(SchedEvent::of_record(e, record));
        }
        // The task it ran in (a waker, or one switched out beside a followed
        // thread) is a thread of the timeline, named as the attribution
        // names it: a viewer then names the waker of a wakeup even when it
        // emits nothing and its own switches are not recorded; by its last
        // name, as a thread that emits is (a waker forked from one program
        // may exec another). Not the idle task, nor a process: it has no
        // events of its own.
        if !self.lean && e.tid != 0 {
            let thread = self.threads.entry(e.tid).or_insert_with(|| Thread { tid: e.tid, pid: e.pid, name: String::new() });
            if thread.name != e.comm {
                thread.name.clone_from(&e.comm);
            }
        }
        let Some(wakee) = self.sched.push(e.time_ns, record) else { return };
        for key in self.stacks.get(&wakee).into_iter().flatten() {
            if let Some(open) = self.open.get_mut(key) {
                open.sched.woken_by(e);
            }
        }
    }

    fn instant(&mut self, e: &EventRecord) {
        if self.drop_instants {
            return;
        }
        let mut args = e.fields.clone();
        if let Some(error) = &e.error {
            args.push(("error".into(), Value::Str(error.clone())));
        }
        let seq = self.next_seq();
        self.instants.push((seq, Instant { time_ns: e.time_ns, pid: e.pid, tid: e.tid, name: name_of(e), args, stack: e.stack.clone() }));
    }

    /// Ends the open span `key` at `end_ns`: a thread slice if it is the
    /// innermost open span of its thread and ends there (`end_tid` `None`:
    /// closed by the timeline on its own thread), otherwise async.
    fn close(&mut self, key: (u32, u64), end_ns: u64, end_tid: Option<u32>, end_args: &[(String, Value)], unfinished: Option<&'static str>) {
        let Some(open) = self.open.remove(&key) else { return };
        let stack = self.stacks.entry(open.tid).or_default();
        let innermost = stack.last() == Some(&key);
        let on_thread = innermost && end_tid.is_none_or(|t| t == open.tid);
        if innermost {
            stack.pop();
        } else {
            stack.retain(|k| *k != key);
        }
        let mut args = open.args;
        if !self.lean {
            args.extend_from_slice(end_args);
            if let Some(why) = unfinished {
                args.push((UNFINISHED.into(), Value::Str(why.into())));
            }
        }
        let close_seq = self.next_seq();
        let end_ns = end_ns.max(open.start_ns);
        let sched = self.sched.summary(open.tid, open.start_ns, end_ns, open.sched, end_tid.is_some_and(|t| t != open.tid));
        self.closed.push(Closed {
            span: Span {
                pid: open.pid,
                tid: open.tid,
                name: open.name,
                start_ns: open.start_ns,
                end_ns,
                args,
                placement: Placement::Thread { depth: 0 },
                id: Some(open.id),
                unfinished,
                sched,
                stack: open.stack,
                trace: open.trace,
            },
            on_thread,
            begin_seq: open.begin_seq,
            close_seq,
        });
    }

    /// Closes every span open on `tid`, innermost first, and forgets its
    /// stack.
    fn close_thread(&mut self, tid: u32, time_ns: u64, why: &'static str) {
        while let Some(&key) = self.stacks.get(&tid).and_then(|s| s.last()) {
            self.close(key, time_ns, None, &[], Some(why));
        }
        self.stacks.remove(&tid);
    }

    fn process_exited(&mut self, pid: u32, time_ns: u64) {
        let mut tids: Vec<u32> = self.open.values().filter(|o| o.pid == pid).map(|o| o.tid).collect();
        tids.sort_unstable();
        tids.dedup();
        for tid in tids {
            self.close_thread(tid, time_ns, PROCESS_EXITED);
        }
    }

    /// Closes every span still open, at the last record's time.
    fn close_open(&mut self) {
        let mut tids: Vec<u32> = self.stacks.iter().filter(|(_, s)| !s.is_empty()).map(|(&t, _)| t).collect();
        tids.sort_unstable();
        for tid in tids {
            self.close_thread(tid, self.end_ns, RECORDING_ENDED);
        }
    }

    fn finish(mut self, start_ns: u64) -> Timeline {
        self.close_open();
        let closed = std::mem::take(&mut self.closed);
        let mut timeline = self.tables(start_ns);
        timeline.spans = place(closed);
        timeline
    }

    /// The timeline of what is held: processes with their best names,
    /// threads, instants, lost markers and counts; no spans.
    fn tables(self, start_ns: u64) -> Timeline {
        let processes = self
            .processes
            .into_iter()
            .filter(|(_, info)| info.events > 0)
            .map(|(pid, info)| {
                let name = info
                    .executable
                    .as_deref()
                    .or_else(|| info.command_line.as_ref().and_then(|c| c.first()).map(String::as_str))
                    .map(|path| path.rsplit('/').next().unwrap_or(path).to_owned())
                    .filter(|n| !n.is_empty())
                    .or(info.event_name)
                    .unwrap_or_default();
                let mut resource = info.resource;
                if let Some(service) = info.sdk_service_name {
                    resource.insert(usertrace::resource::SERVICE_NAME_KEY.to_owned(), service);
                }
                let process = Process {
                    pid,
                    name,
                    executable: info.executable,
                    command_line: info.command_line,
                    container_id: info.container_id,
                    resource,
                    pod_uid: info.pod_uid,
                    events: info.events,
                };
                (pid, process)
            })
            .collect();
        Timeline {
            processes,
            threads: self.threads,
            spans: Vec::new(),
            instants: self.instants.into_iter().map(|(_, i)| i).collect(),
            lost: self.lost,
            sched: self.sched_events,
            orphan_ends: self.orphan_ends,
            start_ns,
            end_ns: self.end_ns,
        }
    }
}

/// Gives thread spans their depth and async spans their lane; returns all
/// spans by start time. Sorts keys with indices, not the spans, which are
/// large: a key read in place would be a cache miss per comparison.
fn place(mut closed: Vec<Closed>) -> Vec<Span> {
    // Depth: in begin order per thread, the spans still open when this one
    // began (closed after it began) enclose it. Thread spans nest properly
    // by construction, so a stack suffices.
    let mut by_begin: Vec<(u64, usize)> = closed.iter().enumerate().filter(|(_, c)| c.on_thread).map(|(i, c)| (c.begin_seq, i)).collect();
    by_begin.sort_unstable();
    let mut stacks: FxHashMap<u32, Vec<u64>> = FxHashMap::default();
    for &(_, i) in &by_begin {
        let c = &mut closed[i];
        let stack = stacks.entry(c.span.tid).or_default();
        while stack.last().is_some_and(|&close| close < c.begin_seq) {
            stack.pop();
        }
        c.span.placement = Placement::Thread { depth: stack.len() as u32 };
        stack.push(c.close_seq);
    }
    // Lanes: the first lane of the process free by the span's start.
    let mut by_start: Vec<(u64, Reverse<u64>, u64, usize)> = closed
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.on_thread)
        .map(|(i, c)| (c.span.start_ns, Reverse(c.span.end_ns), c.begin_seq, i))
        .collect();
    by_start.sort_unstable();
    let mut lanes: FxHashMap<u32, Vec<u64>> = FxHashMap::default();
    for &(.., i) in &by_start {
        let c = &mut closed[i];
        let ends = lanes.entry(c.span.pid).or_default();
        let lane = match ends.iter().position(|&end| end <= c.span.start_ns) {
            Some(lane) => lane,
            None => {
                ends.push(0);
                ends.len() - 1
            }
        };
        ends[lane] = c.span.end_ns;
        c.span.placement = Placement::Async { lane: lane as u32 };
    }
    let mut order: Vec<(u64, u64, usize)> = closed.iter().enumerate().map(|(i, c)| (c.span.start_ns, c.begin_seq, i)).collect();
    order.sort_unstable();
    let mut slots: Vec<Option<Span>> = closed.into_iter().map(|c| Some(c.span)).collect();
    order.into_iter().filter_map(|(.., i)| slots[i].take()).collect()
}

/// Whether `e` carries a part of an OpenTelemetry span's or log record's
/// protobuf (`usertrace::otel_span`), after the first.
fn is_otel_part(e: &EventRecord) -> bool {
    use usertrace::otel_span::{OTLP_LOG_PART_FIELD, OTLP_SPAN_PART_FIELD};
    e.fields.len() == 4 && e.fields.first().is_some_and(|(n, _)| n == OTLP_SPAN_PART_FIELD || n == OTLP_LOG_PART_FIELD)
}

//! Mapping a recording that arrives in batches: a span may begin in one
//! batch and end in a later one, so a batch's spans that are still open
//! at its end are held back, and their begin records carried on, to be
//! paired with their ends in a later batch. Children exported before
//! their parent still name it: ids depend only on the span's begin (see
//! [`super::ids`]).
//!
//! # What is held, and for how long
//!
//! The mapper's work per batch is that batch's records plus what it must
//! look at again, and its tables are capped, so the cost per record
//! stays flat however long a recording runs:
//!
//! - **Open spans.** A carried begin joins a batch's timeline only if the
//!   batch needs it: an event on its thread (for nesting and the log
//!   records it encloses), its end, a `span_parent` naming it, or its
//!   thread's or process's exit. At most [`MAX_OPEN_SPANS`] (10,000) are
//!   carried into a batch, and none open longer than
//!   [`MAX_OPEN_SPAN_AGE`] (one hour, in the recording's time): beyond
//!   either, the oldest are sent as they stand, with
//!   `unfinished = "held open too long"`, and forgotten (their end, if
//!   it comes, is an end without its begin: a log record).
//! - **Processes.** The latest process record of each pid, for names and
//!   command lines, and the namespaces its events carried: one entry per
//!   process not yet exited, so at most the kernel's `pid_max`. A process
//!   is forgotten once its exit (a [`Record::Exit`] of its main thread)
//!   is seen and its last span sent; only the records of processes a
//!   batch mentions go into that batch's timeline.
//! - **Scheduler records** (`record --sched`). A span's on-CPU, runnable
//!   and blocked time come from its thread's records between its begin and
//!   its end, which may be in several batches: those of a thread with an
//!   open span, from that span's begin on, are carried with it and join
//!   the batch its begin joins, with the thread's last record before the
//!   begin (which says what it was doing then): so a span ends with the
//!   same scheduler view as if the recording had come whole. For that the
//!   mapper keeps each thread's latest scheduler record, one per thread
//!   until its exit. At most [`MAX_CARRIED_SCHED`]
//!   (200,000) are carried; beyond that the oldest are dropped, and the
//!   time they covered is what the span's summary calls unknown.

use std::collections::BTreeMap;
use std::time::Duration;

use rustc_hash::{FxHashMap, FxHashSet};

use super::otel::Reassembler;
use super::sdk_resource::SdkResources;
use super::mapping::{map_timeline, namespaces_by_pid, Clock, Mapped, Otlp, ResourceSettings, SPAN_PARENT};
use crate::record::{Namespaces, Record, Value};
use crate::timeline::{SchedRecord, Timeline, SPAN_BEGIN, SPAN_END, UNFINISHED};

/// What the timeline writes into a span still open at the end of the
/// records it was given.
const STILL_OPEN: &str = "recording ended";

/// What a span held open past the limits is sent with.
pub const LET_GO: &str = "held open too long";

/// The most span begins carried into a batch.
pub const MAX_OPEN_SPANS: usize = 10_000;

/// The most scheduler records carried for the threads of open spans.
pub const MAX_CARRIED_SCHED: usize = 200_000;

/// The longest a span is held open, in the recording's time.
pub const MAX_OPEN_SPAN_AGE: Duration = Duration::from_secs(3600);

/// How many open spans the mapper holds, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenSpanLimits {
    /// The most begins carried into a batch.
    pub max_open_spans: usize,
    /// The longest a span is held open, in the recording's time.
    pub max_age: Duration,
}

impl Default for OpenSpanLimits {
    fn default() -> OpenSpanLimits {
        OpenSpanLimits { max_open_spans: MAX_OPEN_SPANS, max_age: MAX_OPEN_SPAN_AGE }
    }
}

/// A carried begin's identity: (pid, span id, start).
type BeginKey = (u32, u64, u64);

/// Maps batch after batch of one recording.
#[derive(Debug)]
pub struct BatchMapper {
    resource: ResourceSettings,
    clock: Clock,
    limits: OpenSpanLimits,
    /// The latest process record of each pid, for names and command lines.
    processes: FxHashMap<u32, Record>,
    namespaces: FxHashMap<u32, Namespaces>,
    /// Processes whose exit was seen but whose spans are still carried.
    exited: FxHashSet<u32>,
    /// Begins of spans still open, in time order.
    carried: Vec<Record>,
    /// Scheduler records of the threads of open spans, since the earliest
    /// begin on each, in time order.
    carried_sched: Vec<Record>,
    sched_dropped: u64,
    /// The latest scheduler record about each thread, from earlier batches.
    last_sched: FxHashMap<u32, Record>,
    spans_let_go: u64,
    processes_forgotten: u64,
    /// The parts of OpenTelemetry spans whose head has not come yet.
    otel_parts: Reassembler,
    /// The latest resource each process's SDK declared, one per process
    /// not yet forgotten.
    sdk: SdkResources,
}

/// What a batch mentions, to pick the carried begins it needs.
#[derive(Default)]
struct Mentions {
    tids: FxHashSet<u32>,
    /// (pid, span id) of ends and of `span_parent` fields.
    spans: FxHashSet<(u32, u64)>,
    exited_pids: FxHashSet<u32>,
    latest_ns: Option<u64>,
}

impl Mentions {
    fn of(batch: &[Record]) -> Mentions {
        let mut m = Mentions::default();
        for r in batch {
            match r {
                Record::Event(e) => {
                    m.tids.insert(e.tid);
                    m.latest_ns = m.latest_ns.max(Some(e.time_ns));
                    for (i, (name, v)) in e.fields.iter().enumerate() {
                        if (i == 0 && name == SPAN_END) || name == SPAN_PARENT {
                            if let Some(id) = v.as_u64() {
                                m.spans.insert((e.pid, id));
                            }
                        }
                    }
                }
                Record::Exit(x) => {
                    m.tids.insert(x.tid);
                    if x.tid == x.pid {
                        m.exited_pids.insert(x.pid);
                    }
                }
                _ => {}
            }
        }
        m
    }

    /// Which of `carried` the batch needs: those it mentions or lets go
    /// (`let_go`), and then
    /// every begin those depend on for their ids (a trace id comes from
    /// the root): the begins open on the same thread, and the one a
    /// `span_parent` names, until nothing more is added.
    fn needed(&self, carried: &[Record], let_go: &FxHashSet<BeginKey>) -> Vec<bool> {
        let mut by_tid: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        let mut by_span: FxHashMap<(u32, u64), usize> = FxHashMap::default();
        let mut todo: Vec<usize> = Vec::new();
        for (i, r) in carried.iter().enumerate() {
            let Record::Event(e) = r else { continue };
            by_tid.entry(e.tid).or_default().push(i);
            if let Some(key @ (_, id, _)) = begin_key(r) {
                by_span.insert((e.pid, id), i);
                if self.exited_pids.contains(&e.pid) || self.spans.contains(&(e.pid, id)) || let_go.contains(&key) {
                    todo.push(i);
                }
            }
        }
        let mut tids_done: FxHashSet<u32> = FxHashSet::default();
        let mut need = vec![false; carried.len()];
        let add_thread = |tid: u32, todo: &mut Vec<usize>, tids_done: &mut FxHashSet<u32>| {
            if tids_done.insert(tid) {
                todo.extend(by_tid.get(&tid).into_iter().flatten());
            }
        };
        for &tid in &self.tids {
            add_thread(tid, &mut todo, &mut tids_done);
        }
        while let Some(i) = todo.pop() {
            if std::mem::replace(&mut need[i], true) {
                continue;
            }
            let Record::Event(e) = &carried[i] else { continue };
            add_thread(e.tid, &mut todo, &mut tids_done);
            let parent = e.fields.iter().find(|(n, _)| n == SPAN_PARENT).and_then(|(_, v)| v.as_u64());
            if let Some(&p) = parent.and_then(|id| by_span.get(&(e.pid, id))) {
                todo.push(p);
            }
        }
        need
    }
}

impl BatchMapper {
    /// A mapper for one recording, with the default limits.
    pub fn new(resource: ResourceSettings, clock: Clock) -> BatchMapper {
        BatchMapper::with_limits(resource, clock, OpenSpanLimits::default())
    }

    /// A mapper for one recording that holds open spans within `limits`.
    pub fn with_limits(resource: ResourceSettings, clock: Clock, limits: OpenSpanLimits) -> BatchMapper {
        BatchMapper {
            resource,
            clock,
            limits: OpenSpanLimits { max_open_spans: limits.max_open_spans.max(1), ..limits },
            processes: FxHashMap::default(),
            namespaces: FxHashMap::default(),
            exited: FxHashSet::default(),
            carried: Vec::new(),
            carried_sched: Vec::new(),
            sched_dropped: 0,
            last_sched: FxHashMap::default(),
            spans_let_go: 0,
            processes_forgotten: 0,
            otel_parts: Reassembler::default(),
            sdk: SdkResources::default(),
        }
    }

    /// How many span begins are carried to the next batch.
    pub fn open_spans(&self) -> usize {
        self.carried.len()
    }

    /// How many scheduler records are carried with the open spans.
    pub fn sched_carried(&self) -> usize {
        self.carried_sched.len()
    }

    /// How many carried scheduler records were dropped past
    /// [`MAX_CARRIED_SCHED`].
    pub fn sched_dropped(&self) -> u64 {
        self.sched_dropped
    }

    /// How many spans were sent unfinished because they were held open
    /// past the limits.
    pub fn spans_let_go(&self) -> u64 {
        self.spans_let_go
    }

    /// How many exited processes were forgotten.
    pub fn processes_forgotten(&self) -> u64 {
        self.processes_forgotten
    }

    /// How many processes it knows (not yet exited, or with spans open).
    pub fn processes(&self) -> usize {
        self.processes.len().max(self.namespaces.len())
    }

    /// The next batch's spans that have ended, and all its log records.
    pub fn map_batch(&mut self, batch: &[Record]) -> Otlp {
        self.map_batch_items(batch).into_otlp()
    }

    /// [`BatchMapper::map_batch`], item by item, before the items are
    /// grouped into requests.
    pub fn map_batch_items(&mut self, batch: &[Record]) -> Mapped {
        self.map(batch, false)
    }

    /// The spans still open at the end of the recording, closed there
    /// (`unfinished = "recording ended"`).
    pub fn finish(&mut self) -> Otlp {
        self.finish_items().into_otlp()
    }

    /// [`BatchMapper::finish`], item by item.
    pub fn finish_items(&mut self) -> Mapped {
        self.map(&[], true)
    }

    /// How many OpenTelemetry spans' parts were dropped to keep the
    /// reassembler within its bounds (their spans are exported marked).
    pub fn otel_parts_evicted(&self) -> u64 {
        self.otel_parts.evicted()
    }

    /// The SDK resources it holds, and the resource events that did not
    /// decode.
    pub fn sdk_resources(&self) -> &SdkResources {
        &self.sdk
    }

    fn map(&mut self, batch: &[Record], last: bool) -> Mapped {
        // An OpenTelemetry span's parts join its head first: the rest of
        // the mapper sees one completed span.
        let joined = self.otel_parts.take(batch);
        let batch: &[Record] = &joined;
        let mentions = Mentions::of(batch);
        let let_go = if last { FxHashSet::default() } else { self.spans_to_let_go(mentions.latest_ns) };
        // The carried begins this batch needs, in time order; the rest
        // wait, untouched, for a batch that does.
        let needed = if last { vec![true; self.carried.len()] } else { mentions.needed(&self.carried, &let_go) };
        let (mut input, mut waiting) = (Vec::new(), Vec::new());
        for (r, need) in std::mem::take(&mut self.carried).into_iter().zip(needed) {
            if need {
                input.push(r);
            } else {
                waiting.push(r);
            }
        }
        // The scheduler records carried for the threads whose begins join,
        // in time order with them; the rest wait with theirs.
        let joined: FxHashSet<u32> = input.iter().filter_map(|r| begin_key(r).map(|_| tid_of(r))).collect();
        let mut waiting_sched = Vec::new();
        for r in std::mem::take(&mut self.carried_sched) {
            if last || sched_tids(&r).iter().flatten().any(|t| joined.contains(t)) {
                input.push(r);
            } else {
                waiting_sched.push(r);
            }
        }
        input.sort_by_key(Record::time_ns);
        input.extend_from_slice(batch);
        // The process records of the processes it mentions, as they stood
        // before it (its own process records follow in it).
        let pids: FxHashSet<u32> = input.iter().filter_map(|r| if let Record::Event(e) = r { Some(e.pid) } else { None }).collect();
        let mut with_processes: Vec<Record> = pids.iter().filter_map(|pid| self.processes.get(pid).cloned()).collect();
        with_processes.append(&mut input);
        let input = with_processes;
        for r in batch {
            match r {
                Record::Process(p) => {
                    self.processes.insert(p.pid, r.clone());
                    // A pid used again after its exit is a new process.
                    self.exited.remove(&p.pid);
                }
                Record::Exit(x) => {
                    self.last_sched.remove(&x.tid);
                    if x.tid == x.pid {
                        self.exited.insert(x.pid);
                    }
                }
                _ => {}
            }
        }
        self.namespaces.extend(namespaces_by_pid(batch));
        let namespaces: BTreeMap<u32, Namespaces> = pids.iter().filter_map(|pid| Some((*pid, *self.namespaces.get(pid)?))).collect();

        let mut timeline = Timeline::build(&input);
        for s in timeline.spans.iter_mut().filter(|s| s.unfinished == Some(STILL_OPEN)) {
            if s.id.is_some_and(|id| let_go.contains(&(s.pid, id, s.start_ns))) {
                s.unfinished = Some(LET_GO);
                for (name, v) in s.args.iter_mut().filter(|(n, _)| n == UNFINISHED) {
                    debug_assert_eq!(name, UNFINISHED);
                    *v = Value::Str(LET_GO.into());
                }
                self.spans_let_go += 1;
            }
        }
        // A process's resource is resolved as the batch is sent: a resource
        // event anywhere in it names the batch's spans written before it.
        let declarations = self.sdk.take(batch);
        let mut otlp = map_timeline(&timeline, &namespaces, &self.resource, &self.sdk, self.clock, |s| last || s.unfinished != Some(STILL_OPEN));
        otlp.declarations = declarations;
        if !last {
            let open: FxHashSet<BeginKey> = timeline
                .spans
                .iter()
                .filter(|s| s.unfinished == Some(STILL_OPEN))
                .filter_map(|s| Some((s.pid, s.id?, s.start_ns)))
                .collect();
            let mut carried = std::mem::take(&mut waiting);
            // The earliest open begin on each thread, the waiting ones too.
            let mut since: FxHashMap<u32, u64> = FxHashMap::default();
            for s in timeline.spans.iter().filter(|s| s.unfinished == Some(STILL_OPEN)) {
                since.entry(s.tid).and_modify(|t| *t = (*t).min(s.start_ns)).or_insert(s.start_ns);
            }
            for r in &carried {
                since.entry(tid_of(r)).and_modify(|t| *t = (*t).min(r.time_ns())).or_insert(r.time_ns());
            }
            // Each record's threads, read once.
            let tids: Vec<[Option<u32>; 2]> = input.iter().map(sched_tids).collect();
            // Each thread's latest record of this batch, and what each thread
            // with an open span was doing at its earliest open begin: its
            // latest record before it, here or in an earlier batch.
            let mut latest: FxHashMap<u32, &Record> = FxHashMap::default();
            let mut state_at: FxHashMap<u32, &Record> = FxHashMap::default();
            let later = |map: &FxHashMap<u32, &Record>, t: u32, r: &Record| map.get(&t).is_none_or(|known| known.time_ns() <= r.time_ns());
            let earlier = self.last_sched.values().map(|r| (r, sched_tids(r)));
            for (r, ts) in input.iter().zip(&tids).map(|(r, ts)| (r, *ts)).chain(earlier) {
                for t in ts.into_iter().flatten() {
                    if since.get(&t).is_some_and(|&from| r.time_ns() < from) && later(&state_at, t, r) {
                        state_at.insert(t, r);
                    }
                }
            }
            for (r, ts) in input.iter().zip(&tids) {
                for t in ts.iter().flatten() {
                    if later(&latest, *t, r) {
                        latest.insert(*t, r);
                    }
                }
            }
            // One thread's state record may be carried for another already
            // (a switch from one to the other): the dedup below drops it.
            let mut sched: Vec<Record> = state_at.into_values().cloned().collect();
            sched.append(&mut waiting_sched);
            // Carried records are older than what an earlier batch left here.
            let latest: Vec<(u32, Record)> = latest
                .into_iter()
                .filter(|(t, r)| self.last_sched.get(t).is_none_or(|known| known.time_ns() <= r.time_ns()))
                .map(|(t, r)| (t, r.clone()))
                .collect();
            let mut new_carried = Vec::new();
            for (r, ts) in input.into_iter().zip(tids) {
                if begin_key(&r).is_some_and(|k| open.contains(&k)) {
                    new_carried.push(r);
                } else if ts.iter().flatten().any(|t| since.get(t).is_some_and(|&from| from <= r.time_ns())) {
                    sched.push(r);
                }
            }
            self.last_sched.extend(latest);
            carried.append(&mut new_carried);
            // Both parts are in time order; a stable sort keeps each.
            carried.sort_by_key(Record::time_ns);
            self.carried = carried;
            sched.sort_by_key(Record::time_ns);
            sched.dedup();
            let over = sched.len().saturating_sub(MAX_CARRIED_SCHED);
            sched.drain(..over);
            self.sched_dropped += over as u64;
            self.carried_sched = sched;
        }
        self.forget_exited();
        otlp
    }

    /// The carried begins to send now as they stand: the oldest beyond
    /// the count, and those open longer than the age limit as of
    /// `latest_ns` (the batch's newest event).
    fn spans_to_let_go(&self, latest_ns: Option<u64>) -> FxHashSet<BeginKey> {
        let over = self.carried.len().saturating_sub(self.limits.max_open_spans);
        let max_age_ns = u64::try_from(self.limits.max_age.as_nanos()).unwrap_or(u64::MAX);
        let too_old = |r: &Record| latest_ns.is_some_and(|t| t.saturating_sub(r.time_ns()) > max_age_ns);
        self.carried.iter().enumerate().filter(|(i, r)| *i < over || too_old(r)).filter_map(|(_, r)| begin_key(r)).collect()
    }

    /// Forgets the exited processes that have no span left open.
    fn forget_exited(&mut self) {
        if self.exited.is_empty() {
            return;
        }
        let still_open: FxHashSet<u32> = self.carried.iter().filter_map(|r| begin_key(r).map(|k| k.0)).collect();
        let done: Vec<u32> = self.exited.iter().copied().filter(|pid| !still_open.contains(pid)).collect();
        for pid in done {
            self.exited.remove(&pid);
            self.sdk.forget(pid);
            let known = self.processes.remove(&pid).is_some() | self.namespaces.remove(&pid).is_some();
            self.processes_forgotten += u64::from(known);
        }
    }
}

/// The thread of a record that is an event (a begin, here).
fn tid_of(r: &Record) -> u32 {
    match r {
        Record::Event(e) => e.tid,
        _ => 0,
    }
}

/// The threads a scheduler record is about (the switched-out and -in, the
/// woken, the moved), or none if it is no scheduler record.
fn sched_tids(r: &Record) -> [Option<u32>; 2] {
    let Record::Event(e) = r else { return [None, None] };
    match SchedRecord::of(e) {
        Some(SchedRecord::Switch { prev, next, .. }) => [prev, next],
        Some(SchedRecord::Waking { wakee }) => [wakee, None],
        Some(SchedRecord::Migrate { tid }) => [tid, None],
        None => [None, None],
    }
}

/// The identity of a span begin record, or `None` for any other record.
fn begin_key(r: &Record) -> Option<BeginKey> {
    match r {
        Record::Event(e) => match e.fields.first() {
            Some((name, v)) if name == SPAN_BEGIN => Some((e.pid, v.as_u64()?, e.time_ns)),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests;

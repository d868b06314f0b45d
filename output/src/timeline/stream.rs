//! A timeline as the viewer outputs write it: a stream of [`Item`]s in
//! time order (span begins, span ends, instants, lost markers), with the
//! tables of processes and threads beside it, built from records one at a
//! time without holding the recording.
//!
//! Where a span is drawn (its thread's track, or a lane of its process) is
//! known only when it ends, and a completed span arrives after its start;
//! so items are not written as they are decided but sorted first, through
//! the [`spool`](super::spool): what stays in memory is the spans still
//! open, the processes and threads, and a fixed budget of items; the rest
//! waits in temporary files. Nesting depths and lanes are given as the
//! sorted items come out, by the same rules as [`Timeline::build`], so a
//! stream holds the same spans, instants and lost markers as the built
//! timeline (the stream's tests check it).
//!
//! Scheduler records come out as [`Item::Sched`], in record order among
//! those of one time: after every other item of that time, as they are on
//! no track of their own.
//!
//! The order of items of one time keeps each track parseable: on a thread
//! track, begins, ends and instants come in record order (so a span's
//! children begin after it and end before it, and an instant is inside
//! the spans open when it was emitted); on a lane, an end comes before a
//! begin of the same time, and a zero-length span's end right after its
//! begin.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use rustc_hash::FxHashMap;

use super::build::Closed;
use super::codec::{self, Decoded};
use super::spool::{Key, Merge, Spool};
use super::{Instant, LostMarker, Placement, SchedEvent, Span, Timeline, TimelineBuilder};
use crate::record::Record;

/// Ends of spans that took time, on lanes: first among items of a time.
const LANE_END: u8 = 0;
/// Begins on lanes, by end (latest first) as lanes are given, each
/// zero-length span's end right after its begin.
const LANE_BEGIN: u8 = 1;
/// Everything on a thread's track, in record order.
const THREAD: u8 = 2;
const LOST: u8 = 3;
/// Scheduler records, in record order.
const SCHED: u8 = 4;

/// One thing for a viewer output to write, in time order.
// Items are handed out one at a time, never held in bulk: a span inline
// costs a larger move, where a box would cost an allocation per span.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A span begins: at `span.start_ns`, on its thread's track at its
    /// depth or on a lane of its process, as `span.placement` says.
    Begin {
        /// The whole span, with its end and args.
        span: Span,
        /// Unique to the span in this stream, and the same in its
        /// [`SpanEnd`].
        serial: u64,
    },
    /// The span begun with the same serial ends.
    End(SpanEnd),
    /// An event that is not a span, at its time.
    Instant(Instant),
    /// Records were lost here.
    Lost(LostMarker),
    /// A scheduler record (`usertrace record --sched`).
    Sched(SchedEvent),
}

/// The end of a span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanEnd {
    /// When it ended.
    pub time_ns: u64,
    /// Its process.
    pub pid: u32,
    /// The thread that began it.
    pub tid: u32,
    /// Its name, for a span on a lane; empty for a thread slice's end.
    pub name: String,
    /// Where it was drawn: as its begin's.
    pub placement: Placement,
    /// Its begin's serial.
    pub serial: u64,
}

/// Builds a timeline's [`TimelineItems`] from records given one at a
/// time, in time order (as [`TimelineBuilder`] takes them), holding only
/// what is open and a bounded share of the items; the rest goes to
/// temporary files, removed from their directory as soon as created.
pub struct TimelineStream {
    builder: TimelineBuilder,
    spool: Spool,
    lost: u64,
    sched: u64,
}

impl Default for TimelineStream {
    /// A stream whose temporary files go in the system's temporary directory.
    fn default() -> TimelineStream {
        TimelineStream::spilling_to(std::env::temp_dir())
    }
}

impl TimelineStream {
    /// A stream whose temporary files go in the system's temporary
    /// directory.
    pub fn new() -> TimelineStream {
        TimelineStream::default()
    }

    /// A stream whose temporary files go in `dir` (the output's own, say,
    /// where the output will need about as much room).
    pub fn spilling_to(dir: impl Into<PathBuf>) -> TimelineStream {
        TimelineStream::of(Spool::spilling_to(dir.into()))
    }

    /// A stream that holds every item in memory and so never fails: for
    /// records that are in memory already.
    pub fn in_memory() -> TimelineStream {
        TimelineStream::of(Spool::in_memory())
    }

    fn of(spool: Spool) -> TimelineStream {
        TimelineStream { builder: TimelineBuilder::new(), spool, lost: 0, sched: 0 }
    }

    /// Adds the next record. Fails only when a temporary file cannot be
    /// written.
    pub fn push(&mut self, record: &Record) -> io::Result<()> {
        self.builder.push(record);
        self.take_decided()
    }

    /// Closes what is still open (at the last record's time, as
    /// [`TimelineBuilder::finish`] does) and gives every item in order.
    pub fn finish(mut self) -> io::Result<TimelineItems> {
        self.builder.close_open();
        self.take_decided()?;
        let tables = self.builder.into_tables();
        Ok(TimelineItems::new(tables, self.lost > 0, self.sched > 0, self.spool.finish()?))
    }

    fn take_decided(&mut self) -> io::Result<()> {
        let decided = self.builder.take_decided();
        for c in decided.closed {
            push_closed(&mut self.spool, &c)?;
        }
        for (seq, i) in decided.instants {
            push_instant(&mut self.spool, &i, seq)?;
        }
        for l in decided.lost {
            self.lost += 1;
            push_lost(&mut self.spool, &l, self.lost)?;
        }
        for e in decided.sched {
            self.sched += 1;
            push_sched(&mut self.spool, &e, self.sched)?;
        }
        Ok(())
    }

    /// A stream that writes a run whenever `budget` bytes of items are
    /// held, to test runs with few items.
    #[cfg(test)]
    pub(crate) fn with_budget(dir: PathBuf, budget: usize) -> TimelineStream {
        TimelineStream::of(Spool::with_budget(Some(dir), budget))
    }

    #[cfg(test)]
    pub(super) fn runs(&self) -> usize {
        self.spool.runs()
    }
}

/// A span the builder closed: its begin and end.
fn push_closed(spool: &mut Spool, c: &Closed) -> io::Result<()> {
    let span = &c.span;
    if c.on_thread {
        push_thread_span(spool, span, c.begin_seq, c.begin_seq, c.close_seq)
    } else {
        push_lane_span(spool, span, c.begin_seq)
    }
}

fn push_thread_span(spool: &mut Spool, span: &Span, serial: u64, begin_seq: u64, close_seq: u64) -> io::Result<()> {
    spool.push(Key { time_ns: span.start_ns, class: THREAD, a: begin_seq, b: 0 }, |out| codec::begin(out, span, true, serial))?;
    spool.push(Key { time_ns: span.end_ns, class: THREAD, a: close_seq, b: 0 }, |out| codec::end(out, span, true, serial))
}

fn push_lane_span(spool: &mut Spool, span: &Span, serial: u64) -> io::Result<()> {
    // Begins by start, then latest end first, then begin order: the order
    // in which Timeline::build gives lanes.
    let by_end = u64::MAX - span.end_ns;
    spool.push(Key { time_ns: span.start_ns, class: LANE_BEGIN, a: by_end, b: serial << 1 }, |out| codec::begin(out, span, false, serial))?;
    let end = if span.end_ns == span.start_ns {
        Key { time_ns: span.end_ns, class: LANE_BEGIN, a: by_end, b: serial << 1 | 1 }
    } else {
        Key { time_ns: span.end_ns, class: LANE_END, a: serial, b: 0 }
    };
    spool.push(end, |out| codec::end(out, span, false, serial))
}

fn push_instant(spool: &mut Spool, instant: &Instant, seq: u64) -> io::Result<()> {
    spool.push(Key { time_ns: instant.time_ns, class: THREAD, a: seq, b: 0 }, |out| codec::instant(out, instant))
}

fn push_lost(spool: &mut Spool, lost: &LostMarker, n: u64) -> io::Result<()> {
    spool.push(Key { time_ns: lost.time_ns, class: LOST, a: n, b: 0 }, |out| codec::lost(out, lost))
}

fn push_sched(spool: &mut Spool, e: &SchedEvent, n: u64) -> io::Result<()> {
    spool.push(Key { time_ns: e.time_ns, class: SCHED, a: n, b: 0 }, |out| codec::sched_event(out, e))
}

/// A timeline's items in time order, with its tables.
pub struct TimelineItems {
    tables: Timeline,
    has_lost: bool,
    has_sched: bool,
    merge: Merge,
    /// Per thread, how many of its slices are open.
    depths: FxHashMap<u32, u32>,
    /// Per process, when each of its lanes is free.
    lanes: FxHashMap<u32, Vec<u64>>,
    /// The lane of each span begun on one and not yet ended, by serial.
    open_lanes: FxHashMap<u64, u32>,
}

impl TimelineItems {
    fn new(tables: Timeline, has_lost: bool, has_sched: bool, merge: Merge) -> TimelineItems {
        TimelineItems {
            tables,
            has_lost,
            has_sched,
            merge,
            depths: FxHashMap::default(),
            lanes: FxHashMap::default(),
            open_lanes: FxHashMap::default(),
        }
    }

    /// The items of a built timeline, in memory. Its spans keep their
    /// depths and lanes (they are given again, by the same rules); on a
    /// thread's track, what has one time is ordered by depth, as the
    /// timeline cannot say in which order its records came.
    pub fn of(timeline: &Timeline) -> TimelineItems {
        let mut spool = Spool::in_memory();
        // An in-memory spool writes no file: it cannot fail.
        let _ = push_timeline(&mut spool, timeline);
        let tables = Timeline {
            processes: timeline.processes.clone(),
            threads: timeline.threads.clone(),
            spans: Vec::new(),
            instants: Vec::new(),
            lost: Vec::new(),
            sched: Vec::new(),
            ..*timeline
        };
        let merge = spool.finish().unwrap_or_else(|_| unreachable!("an in-memory spool reads no file"));
        TimelineItems::new(tables, !timeline.lost.is_empty(), !timeline.sched.is_empty(), merge)
    }

    /// The processes and threads (with their final names), the times and
    /// the counts; its spans, instants, lost markers and scheduler events
    /// are empty: they are the items.
    pub fn tables(&self) -> &Timeline {
        &self.tables
    }

    /// Whether any item is a lost marker (a writer describes their track
    /// before the first item).
    pub fn has_lost(&self) -> bool {
        self.has_lost
    }

    /// Whether any item is a scheduler record (a writer may need to say
    /// something of their clock before the first item).
    pub fn has_sched(&self) -> bool {
        self.has_sched
    }

    /// Gives a decoded item its depth or lane.
    fn place(&mut self, time_ns: u64, decoded: Decoded) -> Item {
        match decoded {
            Decoded::Begin { mut span, on_thread: true, serial } => {
                let depth = self.depths.entry(span.tid).or_default();
                span.placement = Placement::Thread { depth: *depth };
                *depth += 1;
                Item::Begin { span, serial }
            }
            Decoded::Begin { mut span, on_thread: false, serial } => {
                // The first lane of the process free by the span's start.
                let ends = self.lanes.entry(span.pid).or_default();
                let lane = ends.iter().position(|&end| end <= span.start_ns).unwrap_or_else(|| {
                    ends.push(0);
                    ends.len() - 1
                });
                ends[lane] = span.end_ns;
                span.placement = Placement::Async { lane: lane as u32 };
                self.open_lanes.insert(serial, lane as u32);
                Item::Begin { span, serial }
            }
            Decoded::End { pid, tid, name, on_thread, serial } => {
                let placement = if on_thread {
                    let depth = self.depths.get_mut(&tid).map_or(0, |d| {
                        *d = d.saturating_sub(1);
                        *d
                    });
                    if depth == 0 {
                        self.depths.remove(&tid);
                    }
                    Placement::Thread { depth }
                } else {
                    Placement::Async { lane: self.open_lanes.remove(&serial).unwrap_or(0) }
                };
                Item::End(SpanEnd { time_ns, pid, tid, name, placement, serial })
            }
            Decoded::Instant(instant) => Item::Instant(instant),
            Decoded::Lost(lost) => Item::Lost(lost),
            Decoded::Sched(e) => Item::Sched(e),
        }
    }
}

impl Iterator for TimelineItems {
    type Item = io::Result<Item>;

    fn next(&mut self) -> Option<io::Result<Item>> {
        let decoded = match self.merge.next() {
            Ok(Some((key, bytes))) => codec::decode(key.time_ns, bytes).map(|d| (key.time_ns, d)),
            Ok(None) => return None,
            Err(e) => Err(e),
        };
        Some(decoded.map(|(time_ns, d)| self.place(time_ns, d)))
    }
}

/// A thread's spans (with their serials) and instants.
type ThreadTrack<'a> = (Vec<(u64, &'a Span)>, Vec<&'a Instant>);

/// Every item of a built timeline, ordered on each thread track by the
/// sweep of its spans (by start, with their depths) and instants.
fn push_timeline(spool: &mut Spool, timeline: &Timeline) -> io::Result<()> {
    let mut threads: BTreeMap<u32, ThreadTrack<'_>> = BTreeMap::new();
    for (n, span) in timeline.spans.iter().enumerate() {
        // Serials as Chrome's ids have always been: the span's place + 1.
        let serial = n as u64 + 1;
        match span.placement {
            Placement::Thread { .. } => threads.entry(span.tid).or_default().0.push((serial, span)),
            Placement::Async { .. } => push_lane_span(spool, span, serial)?,
        }
    }
    for instant in &timeline.instants {
        threads.entry(instant.tid).or_default().1.push(instant);
    }
    let mut seq = 0;
    for (spans, instants) in threads.values() {
        thread_track(spool, spans, instants, &mut seq)?;
    }
    for (n, lost) in timeline.lost.iter().enumerate() {
        push_lost(spool, lost, n as u64)?;
    }
    for (n, e) in timeline.sched.iter().enumerate() {
        push_sched(spool, e, n as u64)?;
    }
    Ok(())
}

/// One thread's track: each item is given the next `seq`, in an order
/// that nests as the depths say.
fn thread_track(spool: &mut Spool, spans: &[(u64, &Span)], instants: &[&Instant], seq: &mut u64) -> io::Result<()> {
    let mut next = || {
        *seq += 1;
        *seq
    };
    // The spans begun and not yet ended, innermost last.
    let mut open: Vec<(u64, &Span)> = Vec::new();
    let mut instants = instants.iter().peekable();
    let end = |spool: &mut Spool, (serial, span): (u64, &Span), seq: u64| {
        spool.push(Key { time_ns: span.end_ns, class: THREAD, a: seq, b: 0 }, |out| codec::end(out, span, true, serial))
    };
    for &(serial, span) in spans {
        while let Some(instant) = instants.next_if(|i| i.time_ns < span.start_ns) {
            // Ends the open slices that ended before the instant.
            while let Some(&done) = open.last().filter(|(_, s)| s.end_ns < instant.time_ns) {
                open.pop();
                end(spool, done, next())?;
            }
            push_instant(spool, instant, next())?;
        }
        let depth = match span.placement {
            Placement::Thread { depth } => depth as usize,
            Placement::Async { .. } => continue,
        };
        while open.len() > depth {
            let Some(done) = open.pop() else { break };
            end(spool, done, next())?;
        }
        let begin_seq = next();
        spool.push(Key { time_ns: span.start_ns, class: THREAD, a: begin_seq, b: 0 }, |out| codec::begin(out, span, true, serial))?;
        open.push((serial, span));
    }
    for instant in instants {
        while let Some(&done) = open.last().filter(|(_, s)| s.end_ns < instant.time_ns) {
            open.pop();
            end(spool, done, next())?;
        }
        push_instant(spool, instant, next())?;
    }
    while let Some(done) = open.pop() {
        end(spool, done, next())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

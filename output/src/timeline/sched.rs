//! Where a span's time went, from the scheduler: on a CPU, waiting for
//! one, or blocked, and who woke it.
//!
//! # The records
//!
//! `usertrace record --sched` records three kernel tracepoints beside the
//! user events. They are ordinary [`EventRecord`]s, and
//! [`SchedRecord::of`] is the one place that tells them from a user event:
//! a record is a scheduler record only if its name **and** its fields are
//! the kernel's, so that a user event that happens to be called
//! `sched_switch` is still an event.
//!
//! | event                | fields it must have                   | the record's own task |
//! |----------------------|---------------------------------------|-----------------------|
//! | `sched_switch`       | `prev_pid`, `prev_state`, `next_pid`  | the task switched out |
//! | `sched_waking`       | `pid`, `target_cpu`                   | the waker             |
//! | `sched_migrate_task` | `pid`, `orig_cpu`, `dest_cpu`         | any                   |
//!
//! Each of those fields must be an integer. A scheduler record is never an
//! instant in any output, nor a process's or thread's event: the task it
//! names is often another program's, or the idle task.
//!
//! # The model
//!
//! Each thread is in one [`ThreadState`] at a time, from its scheduler
//! records in time order:
//!
//! - a switch-in (`next_pid`) makes it [`Running`](ThreadState::Running);
//! - a switch-out (`prev_pid`) makes it, by `prev_state & 0xff`:
//!   [`Runnable`](ThreadState::Runnable) for 0 (R, or R+ when the
//!   preemption bit 0x100 is set: it wants the CPU back),
//!   [`Sleeping`](ThreadState::Sleeping) for S (0x1),
//!   [`Uninterruptible`](ThreadState::Uninterruptible) for D (0x2, usually
//!   I/O), else [`OtherBlocked`](ThreadState::OtherBlocked) (stopped,
//!   traced, dead, parked, idle);
//! - a waking makes a thread that is not running or runnable
//!   [`Runnable`](ThreadState::Runnable), and its waker is counted;
//! - a migration changes no state and is counted.
//!
//! Before a thread's first scheduler record its state is
//! [`Unknown`](ThreadState::Unknown), and that time is counted as unknown,
//! never guessed: a thread that slept (or spun) since before the recording
//! started is unknown until it is next switched.
//!
//! # Per span
//!
//! A [`SchedSummary`] covers `[start, end)` on the thread where the span
//! began. A span that ended on another thread (a request handed to a
//! worker) still counts its begin thread until its end, and says so in
//! [`SchedSummary::ended_on_another_thread`]. It is computed from running
//! totals read at the span's begin and at its end, so it costs two lookups
//! per span, whatever the number of records; only the wakers are counted
//! into each open span of the woken thread as they come.
//!
//! A span has a summary only if its thread had a scheduler record by its
//! end. A completed span (`span_start_ns`, reported after the fact) has
//! none: it is reported by a thread that did not necessarily run it, and
//! its start is in the past.
//!
//! # Limits
//!
//! - A waking from an interrupt (a timer's expiry ending a `sleep`, a
//!   device's completion) runs in whatever task the interrupt landed on,
//!   so the waker named is that task: often the idle task, which has pid 0.
//! - A lost scheduler record leaves a thread in its last known state until
//!   its next record.
//! - `sched_wakeup` is not read: it can fire on the woken task's CPU, not
//!   the waker's, and alongside `sched_waking` it would count each wake
//!   twice.
//! - Up to [`MAX_WAKERS`] different wakers are counted per span.

use rustc_hash::FxHashMap;

use crate::record::{EventRecord, Value};
use usertrace::{SCHED_MIGRATE_TASK, SCHED_SWITCH, SCHED_WAKING};

/// The wakers of one span counted by name, at most: a span woken by more
/// distinct threads counts the first ones only.
pub const MAX_WAKERS: usize = 64;

/// How many wakers a summary names.
pub const TOP_WAKERS: usize = 3;

/// What a thread was doing, as its scheduler records say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadState {
    /// No scheduler record of it yet.
    Unknown,
    /// On a CPU.
    Running,
    /// Wanting a CPU: preempted, or woken and not yet running.
    Runnable,
    /// Asleep, interruptibly (S): on a lock, a futex, a pipe, a timer.
    Sleeping,
    /// Asleep, uninterruptibly (D): usually on I/O.
    Uninterruptible,
    /// Off the CPU in any other way: stopped, traced, dead, parked, idle.
    OtherBlocked,
}

impl ThreadState {
    /// The state a switch-out's `prev_state` leaves the thread in. Only its
    /// low byte says the state; 0x100 (TASK_REPORT_MAX) marks a preemption,
    /// which leaves it runnable.
    pub fn after_switch_out(prev_state: i64) -> ThreadState {
        match prev_state & 0xff {
            0 => ThreadState::Runnable,
            s if s & 0x1 != 0 => ThreadState::Sleeping,
            s if s & 0x2 != 0 => ThreadState::Uninterruptible,
            _ => ThreadState::OtherBlocked,
        }
    }

    fn is_blocked_or_unknown(self) -> bool {
        !matches!(self, ThreadState::Running | ThreadState::Runnable)
    }
}

/// A scheduler record, read from its event (see [the module doc](self)).
/// A tid that is not one (negative, too large, or the idle task's 0) is
/// `None`: the record is still a scheduler record, and changes nothing
/// for that side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedRecord {
    /// `sched_switch`: `prev` leaves its CPU in `prev_state`; `next` runs.
    Switch {
        /// The thread switched out.
        prev: Option<u32>,
        /// Its `prev_state`.
        prev_state: i64,
        /// The thread switched in.
        next: Option<u32>,
    },
    /// `sched_waking`: the record's own task wakes `wakee`.
    Waking {
        /// The thread woken.
        wakee: Option<u32>,
    },
    /// `sched_migrate_task`: `tid` moves to another CPU.
    Migrate {
        /// The thread moved.
        tid: Option<u32>,
    },
}

impl SchedRecord {
    /// `e` as a scheduler record, if its name and its fields are the
    /// kernel's (the one rule; see [the module doc](self)).
    pub fn of(e: &EventRecord) -> Option<SchedRecord> {
        // Most events are not: one comparison tells.
        if !e.event.starts_with("sched_") {
            return None;
        }
        let int = |name: &str| e.field(name).and_then(integer);
        match e.event.as_str() {
            SCHED_SWITCH => {
                let (prev, prev_state, next) = (int("prev_pid")?, int("prev_state")?, int("next_pid")?);
                Some(SchedRecord::Switch { prev: tid(prev), prev_state, next: tid(next) })
            }
            SCHED_WAKING => {
                let (wakee, _) = (int("pid")?, int("target_cpu")?);
                Some(SchedRecord::Waking { wakee: tid(wakee) })
            }
            SCHED_MIGRATE_TASK => {
                let (moved, _, _) = (int("pid")?, int("orig_cpu")?, int("dest_cpu")?);
                Some(SchedRecord::Migrate { tid: tid(moved) })
            }
            _ => None,
        }
    }
}

/// Whether `e` is a scheduler record ([`SchedRecord::of`]).
pub fn is_sched_record(e: &EventRecord) -> bool {
    SchedRecord::of(e).is_some()
}

pub(super) fn integer(v: &Value) -> Option<i64> {
    match *v {
        Value::Signed(v) => Some(v),
        // A u64 beyond i64 is no pid or state; wrapped, it stays an integer.
        Value::Unsigned(v) => Some(v as i64),
        _ => None,
    }
}

/// A kernel pid (a tid), unless it is not one or is the idle task's.
fn tid(v: i64) -> Option<u32> {
    u32::try_from(v).ok().filter(|&t| t != 0)
}

/// Who woke a span's thread, as the waking record names its own task.
/// In the report's JSON, `{"pid", "tid", "thread", "process", "count"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Waker {
    /// The waker's process.
    pub pid: u32,
    /// The waker's thread.
    pub tid: u32,
    /// The thread's name (comm) at its first waking in the span.
    pub thread: String,
    /// The process's name then.
    pub process: String,
    /// How many times it woke the span's thread inside the span.
    pub count: u64,
}

impl std::fmt::Display for Waker {
    /// `process (pid) / thread (tid), N times`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let times = if self.count == 1 { "time" } else { "times" };
        write!(f, "{} ({}) / {} ({}), {} {times}", self.process, self.pid, self.thread, self.tid, self.count)
    }
}

/// Where one span's time went on the thread where it began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedSummary {
    /// The thread counted: where the span began.
    pub tid: u32,
    /// The span ended on another thread; only its begin thread is counted.
    pub ended_on_another_thread: bool,
    /// On a CPU.
    pub on_cpu_ns: u64,
    /// Wanting a CPU (preempted, or woken and waiting).
    pub runnable_ns: u64,
    /// Asleep, interruptibly (S).
    pub sleeping_ns: u64,
    /// Asleep, uninterruptibly (D, usually I/O).
    pub uninterruptible_ns: u64,
    /// Off the CPU in any other state (stopped, traced, parked, idle).
    pub other_blocked_ns: u64,
    /// Before the thread's first scheduler record.
    pub unknown_ns: u64,
    /// Switch-outs inside the span.
    pub context_switches: u64,
    /// Moves to another CPU inside the span.
    pub migrations: u64,
    /// Who woke the thread most often, most first (at most
    /// [`TOP_WAKERS`]; ties by pid, then tid).
    pub top_wakers: Vec<Waker>,
}

impl SchedSummary {
    /// Off the CPU and not wanting it: sleeping, uninterruptible and the
    /// other blocked states.
    pub fn blocked_ns(&self) -> u64 {
        self.sleeping_ns.saturating_add(self.uninterruptible_ns).saturating_add(self.other_blocked_ns)
    }
}

/// A thread's running totals: nanoseconds in each state and counts, since
/// its first scheduler record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Totals {
    on_cpu: u64,
    runnable: u64,
    sleeping: u64,
    uninterruptible: u64,
    other_blocked: u64,
    unknown: u64,
    switches: u64,
    migrations: u64,
}

impl Totals {
    fn add(&mut self, state: ThreadState, ns: u64) {
        let bucket = match state {
            ThreadState::Unknown => &mut self.unknown,
            ThreadState::Running => &mut self.on_cpu,
            ThreadState::Runnable => &mut self.runnable,
            ThreadState::Sleeping => &mut self.sleeping,
            ThreadState::Uninterruptible => &mut self.uninterruptible,
            ThreadState::OtherBlocked => &mut self.other_blocked,
        };
        *bucket = bucket.saturating_add(ns);
    }

    /// What happened between `earlier` and `self`.
    fn since(&self, earlier: &Totals) -> Totals {
        Totals {
            on_cpu: self.on_cpu.saturating_sub(earlier.on_cpu),
            runnable: self.runnable.saturating_sub(earlier.runnable),
            sleeping: self.sleeping.saturating_sub(earlier.sleeping),
            uninterruptible: self.uninterruptible.saturating_sub(earlier.uninterruptible),
            other_blocked: self.other_blocked.saturating_sub(earlier.other_blocked),
            unknown: self.unknown.saturating_sub(earlier.unknown),
            switches: self.switches.saturating_sub(earlier.switches),
            migrations: self.migrations.saturating_sub(earlier.migrations),
        }
    }
}

/// One thread's state and totals.
struct ThreadClock {
    state: ThreadState,
    /// When `state` began, or the totals were last brought up to date.
    since_ns: u64,
    /// When its first scheduler record came: before it, it is unknown.
    first_ns: u64,
    totals: Totals,
}

impl ThreadClock {
    /// The totals as of `t` (never before the last update: a record out of
    /// order counts as happening then).
    fn at(&self, t: u64) -> Totals {
        let mut totals = self.totals;
        totals.add(self.state, t.saturating_sub(self.since_ns));
        totals
    }

    fn advance(&mut self, t: u64) {
        self.totals = self.at(t);
        self.since_ns = self.since_ns.max(t);
    }
}

/// Every thread's [`ThreadState`] and totals, from scheduler records in
/// time order.
#[derive(Default)]
pub(super) struct SchedTracker {
    threads: FxHashMap<u32, ThreadClock>,
}

impl SchedTracker {
    /// Takes the next scheduler record, at `t`. Returns the thread a waking
    /// woke (from blocked or unknown), whose open spans count the waker.
    pub(super) fn push(&mut self, t: u64, record: SchedRecord) -> Option<u32> {
        match record {
            SchedRecord::Switch { prev, prev_state, next } => {
                if let Some(prev) = prev {
                    let clock = self.clock(prev, t);
                    clock.state = ThreadState::after_switch_out(prev_state);
                    clock.totals.switches += 1;
                }
                if let Some(next) = next {
                    self.clock(next, t).state = ThreadState::Running;
                }
                None
            }
            SchedRecord::Waking { wakee } => {
                let clock = self.clock(wakee?, t);
                if !clock.state.is_blocked_or_unknown() {
                    return None;
                }
                clock.state = ThreadState::Runnable;
                wakee
            }
            SchedRecord::Migrate { tid } => {
                if let Some(tid) = tid {
                    self.clock(tid, t).totals.migrations += 1;
                }
                None
            }
        }
    }

    /// `tid`'s clock brought up to `t`, made (unknown) at its first record.
    fn clock(&mut self, tid: u32, t: u64) -> &mut ThreadClock {
        let clock = self.threads.entry(tid).or_insert(ThreadClock { state: ThreadState::Unknown, since_ns: t, first_ns: t, totals: Totals::default() });
        clock.advance(t);
        clock
    }

    /// `tid`'s totals as of `t`, if it has had a scheduler record.
    pub(super) fn reading(&self, tid: u32, t: u64) -> Option<Totals> {
        self.threads.get(&tid).map(|c| c.at(t))
    }

    /// Forgets an exited thread: its tid may be used again.
    pub(super) fn forget(&mut self, tid: u32) {
        self.threads.remove(&tid);
    }

    /// The summary of a span of `tid` over `[start_ns, end_ns)`, whose
    /// begin read `begin` (`None`: the thread had no record yet), or `None`
    /// if the thread still has none.
    pub(super) fn summary(&self, tid: u32, start_ns: u64, end_ns: u64, open: SpanSched, ended_on_another_thread: bool) -> Option<SchedSummary> {
        let clock = self.threads.get(&tid)?;
        let end = clock.at(end_ns);
        let (mut d, before_first) = match open.begin {
            Some(begin) => (end.since(&begin), 0),
            // The thread's first record came inside the span: unknown
            // from the span's start until then.
            None => (end, clock.first_ns.min(end_ns).saturating_sub(start_ns)),
        };
        d.unknown = d.unknown.saturating_add(before_first);
        let mut top_wakers = open.wakers;
        rank_wakers(&mut top_wakers);
        Some(SchedSummary {
            tid,
            ended_on_another_thread,
            on_cpu_ns: d.on_cpu,
            runnable_ns: d.runnable,
            sleeping_ns: d.sleeping,
            uninterruptible_ns: d.uninterruptible,
            other_blocked_ns: d.other_blocked,
            unknown_ns: d.unknown,
            context_switches: d.switches,
            migrations: d.migrations,
            top_wakers,
        })
    }
}

/// Keeps the [`TOP_WAKERS`] that woke most, most first; ties by pid, then
/// tid, so that the same records always name the same wakers.
pub(crate) fn rank_wakers(wakers: &mut Vec<Waker>) {
    wakers.sort_by(|a, b| b.count.cmp(&a.count).then(a.pid.cmp(&b.pid)).then(a.tid.cmp(&b.tid)));
    wakers.truncate(TOP_WAKERS);
}

/// Adds `more` wakers' counts into `into`, up to [`MAX_WAKERS`] of them.
pub(crate) fn add_wakers(into: &mut Vec<Waker>, more: &[Waker]) {
    for w in more {
        if let Some(known) = into.iter_mut().find(|k| k.pid == w.pid && k.tid == w.tid) {
            known.count = known.count.saturating_add(w.count);
        } else if into.len() < MAX_WAKERS {
            into.push(w.clone());
        }
    }
}

/// What an open span keeps for its summary: its thread's totals at its
/// begin and the wakers counted so far.
#[derive(Debug, Default)]
pub(super) struct SpanSched {
    begin: Option<Totals>,
    wakers: Vec<Waker>,
}

impl SpanSched {
    /// For a span of `tid` beginning at `t`.
    pub(super) fn begin(tracker: &SchedTracker, tid: u32, t: u64) -> SpanSched {
        SpanSched { begin: tracker.reading(tid, t), wakers: Vec::new() }
    }

    /// Counts a waking by `waker` (the waking record's own task).
    pub(super) fn woken_by(&mut self, waker: &EventRecord) {
        if let Some(w) = self.wakers.iter_mut().find(|w| w.pid == waker.pid && w.tid == waker.tid) {
            w.count += 1;
        } else if self.wakers.len() < MAX_WAKERS {
            self.wakers.push(Waker { pid: waker.pid, tid: waker.tid, thread: waker.comm.clone(), process: waker.process.clone(), count: 1 });
        }
    }
}

#[cfg(test)]
mod tests;

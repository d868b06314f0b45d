//! Scheduler context (`record --sched`): which threads the kernel's
//! `sched_switch`, `sched_waking` and `sched_migrate_task` tracepoints are
//! recorded for.
//!
//! # The choice: system-wide events, filtered in the kernel
//!
//! The scheduler tracepoints are opened like any other, on every CPU into
//! the event rings, each with an ftrace filter (`PERF_EVENT_IOC_SET_FILTER`)
//! that keeps only the threads followed: `prev_pid`/`next_pid` of a switch,
//! `pid` of a waking (the wakee; the waker is the task the record comes
//! from) or a migration. The kernel evaluates the filter where the
//! tracepoint fires and drops what does not match before it reaches a
//! ring, so a busy machine's other threads cost a comparison each, not a
//! record. Per-task events with `inherit` would follow only a tree started
//! by us and need a ring per task; a cgroup would follow a container, not
//! the processes that emit our events.
//!
//! The kernel takes one filter per perf event (a second is EEXIST), so
//! when the followed set changes the events are opened anew with the new
//! filter, disabled; then, CPU by CPU, the old one is disabled and the new
//! one enabled ([`crate::drain`]). A switch on that CPU in the microseconds
//! between the two ioctls is missed. The set changes when a followed
//! process starts a thread or a new process emits its first event, and
//! the events are opened anew at most once per round (50 ms).
//!
//! The threads followed are those of every process that emits an event the
//! session records (all its threads, from `/proc/PID/task`, when its first
//! event is read), those of a command the recorder launched
//! ([`SchedScope::follow`]), and every thread or process they fork later.
//! A thread leaves when it exits.
//!
//! # What it misses
//!
//! - A process's scheduling before its first event is read (up to a round,
//!   50 ms, after it): a thread that slept before its first event shows
//!   that sleep as unknown time, never as a guess.
//! - A filter longer than the kernel takes (a page): then the threads'
//!   id range is followed as one span of ids, which may keep other threads'
//!   records too (they are recorded, and ignored by the accounting, which
//!   looks at span threads only).

use crate::bytes::{u32_at, u64_at};
use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::fd::AsFd;
use std::path::Path;

use rustc_hash::FxHashSet;

use std::os::fd::BorrowedFd;
use std::sync::Arc;

use crate::attach::{open_filtered, perf_error, Attachment, Window};
use crate::error::Error;
use crate::format::EventFormat;
use crate::record::{HEADER_LEN, PERF_RECORD_EXIT, PERF_RECORD_FORK, PERF_RECORD_SAMPLE};
use crate::sys;

/// The patterns `--sched` records, as `-e` spells them (the core's list).
pub use usertrace::SCHED_PATTERNS;
use usertrace::{SCHED_SWITCH as SWITCH, SCHED_SYSTEM as SYSTEM, SCHED_TRACEPOINTS};

/// The longest filter the kernel takes (`strndup_user(.., PAGE_SIZE)`),
/// its NUL included.
const MAX_FILTER: usize = 4096;

/// The threads followed, and the scheduler tracepoints' perf ids.
#[derive(Debug, Default)]
pub(crate) struct SchedScope {
    tids: BTreeSet<u32>,
    /// Processes whose every thread is followed.
    pids: FxHashSet<u32>,
    /// Perf ids of the scheduler tracepoints: their samples add nobody.
    sched_ids: FxHashSet<u64>,
    /// The followed set changed since the filters were last set.
    changed: bool,
    /// Each scheduler tracepoint's format file, by tracepoint id, to
    /// describe its events opened anew in an archive.
    texts: rustc_hash::FxHashMap<u64, String>,
}

/// Whether a tracepoint is one of `--sched`'s.
pub(crate) fn is_sched(system: &str, name: &str) -> bool {
    system == SYSTEM && SCHED_TRACEPOINTS.contains(&name)
}

impl SchedScope {
    /// Follows process `pid` and every thread it has.
    pub(crate) fn follow(&mut self, pid: u32) {
        if !self.pids.insert(pid) {
            return;
        }
        self.tids.insert(pid);
        if let Ok(tasks) = std::fs::read_dir(Path::new("/proc").join(pid.to_string()).join("task")) {
            self.tids.extend(tasks.flatten().filter_map(|t| t.file_name().to_str()?.parse::<u32>().ok()));
        }
        self.changed = true;
    }

    /// Opens scheduler tracepoint `format` on every CPU, filtered from its
    /// first record, and takes its perf ids.
    pub(crate) fn open(&mut self, format: &Arc<EventFormat>, format_text: &str, rings: &[(u32, BorrowedFd<'_>)]) -> Result<Attachment, Error> {
        let filter = CString::new(self.filter_for(&format.name)).expect("a filter of digits and field names");
        let events = open_filtered(format, rings, &filter)?;
        for (cpu, fd, _) in &events {
            sys::enable(fd.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ENABLE(sched)", *cpu, e))?;
        }
        self.texts.insert(format.id, format_text.to_owned());
        self.sched_ids.extend(events.iter().map(|(_, _, id)| *id));
        Ok(Attachment { format: format.clone(), events, window: Window::Held })
    }

    /// Looks at one record of a ring: a sample of a followed event makes
    /// its process followed; a fork inside the followed set adds the new
    /// thread; an exit removes one.
    pub(crate) fn observe(&mut self, record: &[u8]) {
        let u32_at = |at: usize| u32_at(record, at);
        match u32_at(0) {
            Some(PERF_RECORD_SAMPLE) => {
                // id, then pid and tid (the session's sample_type).
                let id = u64_at(record, HEADER_LEN);
                if let (Some(id), Some(pid)) = (id, u32_at(HEADER_LEN + 8)) {
                    if !self.sched_ids.contains(&id) && pid != 0 {
                        self.follow(pid);
                    }
                }
            }
            Some(PERF_RECORD_FORK) => {
                // pid, ppid, tid, ptid.
                if let (Some(pid), Some(ppid), Some(tid), Some(ptid)) = (u32_at(HEADER_LEN), u32_at(HEADER_LEN + 4), u32_at(HEADER_LEN + 8), u32_at(HEADER_LEN + 12)) {
                    if self.tids.contains(&ptid) || self.pids.contains(&ppid) || self.pids.contains(&pid) {
                        if pid == tid {
                            self.pids.insert(pid);
                        }
                        self.changed |= self.tids.insert(tid);
                    }
                }
            }
            Some(PERF_RECORD_EXIT) => {
                if let (Some(pid), Some(tid)) = (u32_at(HEADER_LEN), u32_at(HEADER_LEN + 8)) {
                    self.changed |= self.tids.remove(&tid);
                    if pid == tid {
                        self.pids.remove(&pid);
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether the followed set changed since this was last asked.
    pub(crate) fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// The format file of scheduler tracepoint `id`.
    pub(crate) fn format_text(&self, id: u64) -> Option<&str> {
        self.texts.get(&id).map(String::as_str)
    }

    /// Perf ids of a scheduler tracepoint opened anew.
    pub(crate) fn reopened(&mut self, ids: &[u64]) {
        self.sched_ids.extend(ids);
    }

    /// The ftrace filter of tracepoint `name`: its thread fields against
    /// the followed tids, runs of consecutive tids as ranges.
    pub(crate) fn filter_for(&self, name: &str) -> String {
        let fields: &[&str] = if name == SWITCH { &["prev_pid", "next_pid"] } else { &["pid"] };
        let runs = runs(&self.tids);
        let filter = filter(fields, &runs);
        if filter.len() < MAX_FILTER {
            return filter;
        }
        let (first, last) = (runs.first().map_or(0, |r| r.0), runs.last().map_or(0, |r| r.1));
        filter_of_runs(fields, &[(first, last)])
    }
}

/// Consecutive tids as (first, last) runs.
fn runs(tids: &BTreeSet<u32>) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &tid in tids {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == tid => *last = tid,
            _ => out.push((tid, tid)),
        }
    }
    out
}

fn filter(fields: &[&str], runs: &[(u32, u32)]) -> String {
    if runs.is_empty() {
        // Nobody yet: a filter that holds for no thread (ids are never
        // negative).
        return format!("{}<0", fields[0]);
    }
    filter_of_runs(fields, runs)
}

fn filter_of_runs(fields: &[&str], runs: &[(u32, u32)]) -> String {
    let mut terms = Vec::new();
    for field in fields {
        for &(first, last) in runs {
            terms.push(if first == last { format!("{field}=={first}") } else { format!("({field}>={first}&&{field}<={last})") });
        }
    }
    terms.join("||")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(tids: &[u32]) -> SchedScope {
        SchedScope { tids: tids.iter().copied().collect(), ..SchedScope::default() }
    }

    #[test]
    fn filters_name_each_run_of_tids_once_per_field() {
        let s = scope(&[7, 10, 11, 12, 20]);
        assert_eq!(s.filter_for("sched_waking"), "pid==7||(pid>=10&&pid<=12)||pid==20");
        assert_eq!(
            s.filter_for("sched_switch"),
            "prev_pid==7||(prev_pid>=10&&prev_pid<=12)||prev_pid==20||next_pid==7||(next_pid>=10&&next_pid<=12)||next_pid==20"
        );
        assert_eq!(scope(&[]).filter_for("sched_switch"), "prev_pid<0");
    }

    #[test]
    fn a_filter_past_a_page_becomes_the_range_of_every_tid() {
        let many: Vec<u32> = (0..2000).map(|i| 1000 + 2 * i).collect();
        let s = scope(&many);
        assert_eq!(s.filter_for("sched_switch"), "(prev_pid>=1000&&prev_pid<=4998)||(next_pid>=1000&&next_pid<=4998)");
    }

    fn task_record(kind: u32, pid: u32, ppid: u32, tid: u32, ptid: u32) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&kind.to_ne_bytes());
        r.extend_from_slice(&0u16.to_ne_bytes());
        r.extend_from_slice(&48u16.to_ne_bytes());
        for v in [pid, ppid, tid, ptid] {
            r.extend_from_slice(&v.to_ne_bytes());
        }
        r.resize(48, 0);
        r
    }

    fn sample(id: u64, pid: u32) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&PERF_RECORD_SAMPLE.to_ne_bytes());
        r.extend_from_slice(&0u16.to_ne_bytes());
        r.extend_from_slice(&32u16.to_ne_bytes());
        r.extend_from_slice(&id.to_ne_bytes());
        r.extend_from_slice(&pid.to_ne_bytes());
        r.extend_from_slice(&pid.to_ne_bytes());
        r.resize(32, 0);
        r
    }

    #[test]
    fn forks_inside_the_followed_set_join_it_and_exits_leave() {
        let mut s = SchedScope::default();
        s.sched_ids.insert(99);
        // A scheduler sample of pid 5 adds nobody; an event of pid 4_000_000
        // (no such process in /proc) follows that pid.
        s.observe(&sample(99, 5));
        assert!(s.tids.is_empty());
        s.observe(&sample(1, 4_000_000));
        assert_eq!(s.tids.iter().copied().collect::<Vec<_>>(), [4_000_000]);
        // Its new thread, then a child process of it, then a stranger.
        s.observe(&task_record(PERF_RECORD_FORK, 4_000_000, 1, 4_000_001, 4_000_000));
        s.observe(&task_record(PERF_RECORD_FORK, 4_000_002, 4_000_000, 4_000_002, 4_000_001));
        s.observe(&task_record(PERF_RECORD_FORK, 3_000_000, 1, 3_000_000, 1));
        assert_eq!(s.tids.iter().copied().collect::<Vec<_>>(), [4_000_000, 4_000_001, 4_000_002]);
        s.observe(&task_record(PERF_RECORD_EXIT, 4_000_000, 1, 4_000_001, 4_000_000));
        assert_eq!(s.tids.iter().copied().collect::<Vec<_>>(), [4_000_000, 4_000_002]);
        assert!(s.changed);
    }
}

//! Who a thread was at a given time: the comm history of every tid.
//!
//! The kernel's sideband records (FORK, COMM, EXIT) are exact and
//! timestamped. A `/proc` snapshot fills in threads that existed before the
//! session, each entry stamped with CLOCK_MONOTONIC read *before* the entry
//! was read, so a later kernel record always wins over it, and a kernel
//! record from before the stamp agrees with what /proc showed.
//!
//! Lookups take the newest entry at or before the event's time, so events
//! read after a process exited, renamed or exec'd still get the name that
//! was true when they were emitted.

use std::collections::HashMap;
use std::sync::Arc;

/// Where a name came from; on equal timestamps the kernel wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    Proc,
    Kernel,
}

#[derive(Debug, Clone)]
struct Entry {
    time: u64,
    source: Source,
    pid: u32,
    comm: Arc<str>,
}

/// The comm history of every thread seen.
#[derive(Debug, Default)]
pub struct ThreadTable {
    threads: HashMap<u32, Vec<Entry>>,
}

/// A thread's identity at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The thread's own name.
    pub comm: Arc<str>,
    /// The name of the process (its main thread, tid == pid).
    pub process: Arc<str>,
}

impl ThreadTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// A thread as /proc showed it, read at (just after) `time`.
    pub fn synthesize(&mut self, pid: u32, tid: u32, comm: &str, time: u64) {
        self.insert(tid, Entry { time, source: Source::Proc, pid, comm: comm.into() });
    }

    /// PERF_RECORD_COMM: a rename (prctl) or, with `exec`, a new program.
    pub fn comm(&mut self, pid: u32, tid: u32, comm: &str, _exec: bool, time: u64) {
        // An exec is just a name change for attribution: the tid stays, and
        // the kernel reports it under the leader's tid after de_thread.
        self.insert(tid, Entry { time, source: Source::Kernel, pid, comm: comm.into() });
    }

    /// PERF_RECORD_FORK: `tid` is new (a process or a thread) and starts
    /// with the name `ptid` had. Whatever was known of an earlier thread with
    /// the same tid (pid reuse) is forgotten.
    pub fn fork(&mut self, pid: u32, tid: u32, ptid: u32, time: u64) {
        let comm = self.comm_at(ptid, time).unwrap_or_else(|| format!(":{ptid}").into());
        let history = self.threads.entry(tid).or_default();
        history.retain(|e| e.time > time);
        let at = history.partition_point(|e| e.time <= time);
        history.insert(at, Entry { time, source: Source::Kernel, pid, comm });
    }

    /// PERF_RECORD_EXIT. The history is kept: events may still be read for
    /// the thread, and the next FORK of this tid starts afresh anyway.
    pub fn exit(&mut self, _tid: u32, _time: u64) {}

    fn insert(&mut self, tid: u32, entry: Entry) {
        let history = self.threads.entry(tid).or_default();
        let key = (entry.time, entry.source);
        let at = history.partition_point(|e| (e.time, e.source) <= key);
        history.insert(at, entry);
    }

    fn entry_at(&self, tid: u32, time: u64) -> Option<&Entry> {
        let history = self.threads.get(&tid)?;
        let at = history.partition_point(|e| e.time <= time);
        // An event before anything we know (it raced the snapshot): the
        // oldest entry is the best guess there is.
        history.get(at.saturating_sub(1))
    }

    fn comm_at(&self, tid: u32, time: u64) -> Option<Arc<str>> {
        self.entry_at(tid, time).map(|e| e.comm.clone())
    }

    /// The thread and process names of `pid`/`tid` at `time`. Unknown
    /// threads are named `:TID`, as perf does.
    pub fn identity(&self, pid: u32, tid: u32, time: u64) -> Identity {
        let comm = self.comm_at(tid, time).unwrap_or_else(|| format!(":{tid}").into());
        let process = if pid == tid { comm.clone() } else { self.comm_at(pid, time).unwrap_or_else(|| comm.clone()) };
        Identity { comm, process }
    }

    /// The pid a tid belonged to at `time`, if known.
    pub fn pid_at(&self, tid: u32, time: u64) -> Option<u32> {
        self.entry_at(tid, time).map(|e| e.pid)
    }

    pub fn len(&self) -> usize {
        self.threads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: &ThreadTable, pid: u32, tid: u32, time: u64) -> (String, String) {
        let id = t.identity(pid, tid, time);
        (id.comm.to_string(), id.process.to_string())
    }

    #[test]
    fn exec_and_rename_give_old_renamed_new_at_their_times() {
        let mut t = ThreadTable::new();
        t.synthesize(100, 100, "bash", 10);
        t.fork(200, 200, 100, 20);
        t.comm(200, 200, "producer", true, 30);
        t.comm(200, 200, "renamed", false, 40);
        t.comm(200, 200, "other", true, 50);
        t.exit(200, 60);
        assert_eq!(names(&t, 200, 200, 25).0, "bash");
        assert_eq!(names(&t, 200, 200, 35).0, "producer");
        assert_eq!(names(&t, 200, 200, 45).0, "renamed");
        assert_eq!(names(&t, 200, 200, 55).0, "other");
        // Read long after it exited: still right.
        assert_eq!(names(&t, 200, 200, 10_000).0, "other");
    }

    #[test]
    fn kernel_records_win_over_proc_and_proc_fills_the_past() {
        let mut t = ThreadTable::new();
        // A COMM after the snapshot's stamp: the kernel is newer.
        t.synthesize(7, 7, "before", 100);
        t.comm(7, 7, "after", false, 150);
        assert_eq!(names(&t, 7, 7, 120).0, "before");
        assert_eq!(names(&t, 7, 7, 200).0, "after");
        // Same timestamp: kernel first.
        t.synthesize(8, 8, "proc", 100);
        t.comm(8, 8, "kernel", false, 100);
        assert_eq!(names(&t, 8, 8, 100).0, "kernel");
    }

    #[test]
    fn threads_get_their_process_name_and_forks_inherit() {
        let mut t = ThreadTable::new();
        t.synthesize(300, 300, "server", 1);
        t.fork(300, 301, 300, 5); // a thread
        t.comm(300, 301, "worker", false, 6);
        assert_eq!(names(&t, 300, 301, 7), ("worker".into(), "server".into()));
        assert_eq!(names(&t, 300, 301, 5), ("server".into(), "server".into()));
        assert_eq!(t.pid_at(301, 7), Some(300));
    }

    #[test]
    fn a_reused_pid_forgets_the_old_process() {
        let mut t = ThreadTable::new();
        t.synthesize(1, 1, "init", 0);
        t.fork(500, 500, 1, 10);
        t.comm(500, 500, "first", true, 11);
        t.exit(500, 12);
        t.synthesize(2, 2, "launcher", 0);
        t.fork(500, 500, 2, 20);
        assert_eq!(names(&t, 500, 500, 21).0, "launcher");
        // The old life is gone: no stale "first".
        assert_eq!(names(&t, 500, 500, 11).0, "launcher");
    }

    #[test]
    fn unknown_threads_are_named_by_tid() {
        let t = ThreadTable::new();
        assert_eq!(names(&t, 9, 9, 1), (":9".into(), ":9".into()));
    }
}

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
//!
//! The session's ordering watermark bounds what is kept
//! ([`ThreadTable::forget_before`]): no event older than it can still come.
//! - A thread that exited is forgotten once the watermark has passed its
//!   exit, so a long recording over short-lived processes keeps a table the
//!   size of what is alive, not of everything that ever ran. (One case
//!   loses a little: a thread that outlives its process's main thread,
//!   after that one called `pthread_exit`, is then named by its own comm.)
//! - A live thread's history keeps, of what came before the watermark, only
//!   the newest entry (what it was at the watermark), so a thread that
//!   renames itself in a loop holds the names of about one round, not of
//!   its whole life.

use std::collections::VecDeque;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::namespaces::Namespaces;

/// Where a fact came from; on equal timestamps the later variant wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    /// Copied from the parent at FORK (namespaces only: the kernel sends
    /// the child's own right after, with the same or a later time).
    Inherited,
    Proc,
    Kernel,
}

#[derive(Debug, Clone)]
struct Entry<T> {
    time: u64,
    source: Source,
    value: T,
}

/// What one tid was, over time, oldest first.
#[derive(Debug)]
struct History<T>(Vec<Entry<T>>);

impl<T> Default for History<T> {
    fn default() -> Self {
        History(Vec::new())
    }
}

impl<T> History<T> {
    /// Inserts in order, then drops what no lookup at or after `horizon`
    /// can pick: every entry before the newest one at or before it.
    fn insert(&mut self, entry: Entry<T>, horizon: u64) {
        let key = (entry.time, entry.source);
        let at = self.0.partition_point(|e| (e.time, e.source) <= key);
        self.0.insert(at, entry);
        let superseded = self.0.partition_point(|e| e.time <= horizon).saturating_sub(1);
        self.0.drain(..superseded);
    }

    /// The newest entry at or before `time`. An event before anything we
    /// know (it raced the snapshot) gets the oldest entry: the best guess
    /// there is.
    fn at(&self, time: u64) -> Option<&T> {
        let at = self.0.partition_point(|e| e.time <= time);
        self.0.get(at.saturating_sub(1)).map(|e| &e.value)
    }

    /// A new task under a reused tid: forget what came before `time`.
    fn restart(&mut self, time: u64) {
        self.0.retain(|e| e.time >= time);
    }

    /// The time of the newest entry.
    fn newest(&self) -> Option<u64> {
        self.0.last().map(|e| e.time)
    }
}

/// A thread's name, and the process it belonged to.
#[derive(Debug, Clone)]
struct Name {
    pid: u32,
    comm: Arc<str>,
}

/// The comm (and, when recorded, namespace) history of every thread seen.
#[derive(Debug, Default)]
pub struct ThreadTable {
    names: FxHashMap<u32, History<Name>>,
    namespaces: FxHashMap<u32, History<Arc<Namespaces>>>,
    /// (exit time, tid), oldest first: EXIT records are applied in time
    /// order, so pushing keeps it sorted.
    exited: VecDeque<(u64, u32)>,
    /// The watermark last passed to [`forget_before`](Self::forget_before):
    /// lookups come at or after it, so older history is trimmed.
    horizon: u64,
}

/// A thread's identity at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The thread's own name.
    pub comm: Arc<str>,
    /// The name of the process (its main thread, tid == pid).
    pub process: Arc<str>,
    /// Its namespaces, when the session records them.
    pub namespaces: Option<Arc<Namespaces>>,
}

impl ThreadTable {
    /// An empty table; a session fills it from /proc, then from sideband.
    pub fn new() -> Self {
        Self::default()
    }

    /// A thread as /proc showed it, read at (just after) `time`.
    pub fn synthesize(&mut self, pid: u32, tid: u32, comm: &str, time: u64) {
        self.insert_name(tid, time, Source::Proc, Name { pid, comm: comm.into() });
    }

    /// A thread's namespaces as /proc showed them, read at `time`.
    pub fn synthesize_namespaces(&mut self, tid: u32, namespaces: Arc<Namespaces>, time: u64) {
        self.namespaces.entry(tid).or_default().insert(Entry { time, source: Source::Proc, value: namespaces }, self.horizon);
    }

    /// PERF_RECORD_COMM: a rename (prctl) or, with `exec`, a new program.
    pub fn comm(&mut self, pid: u32, tid: u32, comm: &str, _exec: bool, time: u64) {
        // An exec is just a name change for attribution: the tid stays, and
        // the kernel reports it under the leader's tid after de_thread.
        self.insert_name(tid, time, Source::Kernel, Name { pid, comm: comm.into() });
    }

    /// PERF_RECORD_NAMESPACES: the task's namespaces from `time` on.
    pub fn namespaces(&mut self, tid: u32, namespaces: Namespaces, time: u64) {
        let history = self.namespaces.entry(tid).or_default();
        // Successive records of one task mostly repeat themselves: share them.
        let value = match history.at(time) {
            Some(known) if **known == namespaces => known.clone(),
            _ => Arc::new(namespaces),
        };
        history.insert(Entry { time, source: Source::Kernel, value }, self.horizon);
    }

    /// PERF_RECORD_FORK: `tid` is new (a process or a thread) and starts
    /// with the name and namespaces `ptid` had. Whatever was known of an
    /// earlier thread with the same tid (pid reuse) is forgotten.
    pub fn fork(&mut self, pid: u32, tid: u32, ptid: u32, time: u64) {
        let comm = self.name_at(ptid, time).map_or_else(|| format!(":{ptid}").into(), |n| n.comm.clone());
        let inherited = self.namespaces_at(ptid, time);
        let names = self.names.entry(tid).or_default();
        names.restart(time);
        names.insert(Entry { time, source: Source::Kernel, value: Name { pid, comm } }, self.horizon);
        let namespaces = self.namespaces.entry(tid).or_default();
        namespaces.restart(time);
        if let Some(value) = inherited {
            namespaces.insert(Entry { time, source: Source::Inherited, value }, self.horizon);
        }
    }

    /// PERF_RECORD_EXIT. The history is kept until [`forget_before`]
    /// passes `time`: events emitted before the exit may still be on
    /// their way through the orderer.
    ///
    /// [`forget_before`]: Self::forget_before
    pub fn exit(&mut self, tid: u32, time: u64) {
        self.exited.push_back((time, tid));
    }

    /// Forgets what no event at or after `watermark` (the time up to which
    /// every record has been applied) can need: the threads that exited
    /// before it, and, as live threads' histories next grow, their entries
    /// superseded before it. A tid that a later FORK reused keeps its new
    /// history.
    pub fn forget_before(&mut self, watermark: u64) {
        self.horizon = self.horizon.max(watermark);
        while let Some(&(time, tid)) = self.exited.front() {
            if time >= watermark {
                break;
            }
            self.exited.pop_front();
            if self.names.get(&tid).and_then(History::newest).is_some_and(|newest| newest <= time) {
                self.names.remove(&tid);
            }
            if self.namespaces.get(&tid).and_then(History::newest).is_some_and(|newest| newest <= time) {
                self.namespaces.remove(&tid);
            }
        }
    }

    fn insert_name(&mut self, tid: u32, time: u64, source: Source, name: Name) {
        self.names.entry(tid).or_default().insert(Entry { time, source, value: name }, self.horizon);
    }

    fn name_at(&self, tid: u32, time: u64) -> Option<&Name> {
        self.names.get(&tid)?.at(time)
    }

    fn namespaces_at(&self, tid: u32, time: u64) -> Option<Arc<Namespaces>> {
        self.namespaces.get(&tid)?.at(time).cloned()
    }

    /// The thread and process names (and namespaces) of `pid`/`tid` at
    /// `time`. Unknown threads are named `:TID`, and tid 0 (each CPU's
    /// idle task, which `/proc` does not list: what a scheduler record
    /// or an interrupt on an idle CPU runs in) `swapper`, as perf does.
    pub fn identity(&self, pid: u32, tid: u32, time: u64) -> Identity {
        let unknown = || if tid == 0 { "swapper".into() } else { format!(":{tid}").into() };
        let comm = self.name_at(tid, time).map_or_else(unknown, |n| n.comm.clone());
        let process =
            if pid == tid { comm.clone() } else { self.name_at(pid, time).map_or_else(|| comm.clone(), |n| n.comm.clone()) };
        Identity { comm, process, namespaces: self.namespaces_at(tid, time) }
    }

    /// The pid a tid belonged to at `time`, if known.
    pub fn pid_at(&self, tid: u32, time: u64) -> Option<u32> {
        self.name_at(tid, time).map(|n| n.pid)
    }

    /// How many threads the table holds (alive, or exited and not yet
    /// forgotten).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the table holds no thread.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_thread_is_named_by_its_tid_and_tid_0_is_the_idle_task() {
        let t = ThreadTable::new();
        assert_eq!(&*t.identity(7, 8, 1).comm, ":8");
        // Its process unknown too, it goes by the thread's name.
        assert_eq!(&*t.identity(7, 8, 1).process, ":8");
        let idle = t.identity(0, 0, 1);
        assert_eq!((&*idle.comm, &*idle.process), ("swapper", "swapper"));
    }

    #[test]
    fn exited_threads_are_forgotten_once_the_watermark_passes_their_exit() {
        let mut t = ThreadTable::new();
        t.synthesize(1, 1, "init", 0);
        // 100,000 short-lived processes, each forked, exec'd and gone, with
        // the watermark trailing a little behind as a session's does.
        let mut largest = 0;
        for i in 0..100_000u64 {
            let (tid, time) = (1000 + (i % 30_000) as u32, 10 + i * 10);
            t.fork(tid, tid, 1, time);
            t.comm(tid, tid, "short", true, time + 1);
            t.namespaces(tid, Namespaces::default(), time + 2);
            t.exit(tid, time + 3);
            t.forget_before(time.saturating_sub(50));
            largest = largest.max(t.len());
        }
        assert!(largest <= 8, "the table grew to {largest} threads");
        t.forget_before(u64::MAX);
        assert_eq!(t.len(), 1, "only init is left");
        assert_eq!(t.namespaces.len(), 0);
        assert!(t.exited.is_empty());
    }

    #[test]
    fn a_thread_renamed_in_a_loop_keeps_only_the_history_ordering_can_still_ask_for() {
        let host = Namespaces { pid: 10, ..Default::default() };
        let container = Namespaces { pid: 11, ..Default::default() };
        let name = |i: u64| format!("name-{i}");
        let mut t = ThreadTable::new();
        t.synthesize(7, 7, "looper", 0);
        // A long-lived thread renames itself (and switches namespaces)
        // 100,000 times, with the watermark trailing as a session's does.
        let (mut longest_names, mut longest_namespaces) = (0, 0);
        for i in 0..100_000u64 {
            let time = 10 + i * 10;
            t.comm(7, 7, &name(i), false, time);
            t.namespaces(7, if i % 2 == 0 { host } else { container }, time);
            let watermark = time.saturating_sub(50);
            t.forget_before(watermark);
            longest_names = longest_names.max(t.names[&7].0.len());
            longest_namespaces = longest_namespaces.max(t.namespaces[&7].0.len());
            if i >= 5 {
                // The orderer may still release anything from the watermark
                // on: each such time gets the name that was true then.
                assert_eq!(t.identity(7, 7, watermark).comm.as_ref(), name(i - 5));
                assert_eq!(t.identity(7, 7, watermark + 9).comm.as_ref(), name(i - 5));
                assert_eq!(t.identity(7, 7, time - 1).comm.as_ref(), name(i - 1));
                let expected = if (i - 5) % 2 == 0 { host } else { container };
                assert_eq!(t.identity(7, 7, watermark).namespaces.as_deref(), Some(&expected));
            }
            assert_eq!(t.identity(7, 7, time).comm.as_ref(), name(i));
        }
        assert!(longest_names <= 8, "the name history grew to {longest_names} entries");
        assert!(longest_namespaces <= 8, "the namespace history grew to {longest_namespaces} entries");
    }

    #[test]
    fn a_tid_reused_before_the_old_exit_is_forgotten_keeps_its_new_history() {
        let mut t = ThreadTable::new();
        t.fork(50, 50, 1, 10);
        t.comm(50, 50, "old", true, 11);
        t.exit(50, 20);
        t.fork(50, 50, 1, 30);
        t.comm(50, 50, "new", true, 31);
        t.forget_before(40);
        assert_eq!(t.identity(50, 50, 35).comm.as_ref(), "new");
    }

    #[test]
    fn an_exit_at_or_after_the_watermark_is_kept() {
        let mut t = ThreadTable::new();
        t.fork(50, 50, 1, 10);
        t.comm(50, 50, "late", true, 11);
        t.exit(50, 20);
        t.forget_before(20);
        assert_eq!(t.identity(50, 50, 15).comm.as_ref(), "late", "an event at 15 may still be in flight");
        t.forget_before(21);
        assert_eq!(t.identity(50, 50, 15).comm.as_ref(), ":50");
    }

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
    fn namespaces_follow_unshare_and_fork_and_the_kernel_wins() {
        let host = Namespaces { pid: 10, uts: 20, ..Default::default() };
        let container = Namespaces { pid: 11, uts: 21, ..Default::default() };
        let mut t = ThreadTable::new();
        t.synthesize(100, 100, "shell", 1);
        t.synthesize_namespaces(100, Arc::new(host), 1);
        // A child inherits at fork; the kernel's record for it wins at the
        // same timestamp.
        t.fork(200, 200, 100, 10);
        assert_eq!(t.identity(200, 200, 10).namespaces.as_deref(), Some(&host));
        t.namespaces(200, container, 10);
        assert_eq!(t.identity(200, 200, 10).namespaces.as_deref(), Some(&container));
        // The parent unshares later: before that it was on the host.
        t.namespaces(100, container, 30);
        assert_eq!(t.identity(100, 100, 29).namespaces.as_deref(), Some(&host));
        assert_eq!(t.identity(100, 100, 31).namespaces.as_deref(), Some(&container));
        // A reused tid forgets the old task's namespaces.
        t.fork(200, 200, 300, 50);
        assert_eq!(t.identity(200, 200, 51).namespaces, None);
        assert_eq!(t.identity(9, 9, 1).namespaces, None);
    }

    #[test]
    fn unknown_threads_are_named_by_tid() {
        let t = ThreadTable::new();
        assert_eq!(names(&t, 9, 9, 1), (":9".into(), ":9".into()));
    }
}

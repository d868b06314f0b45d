//! Who emitted each record: records from every ring, put in one time order,
//! replay the sideband into the thread table, and each sample leaves as an
//! [`Output::Event`] under the names its thread and process had then.
//!
//! A live [`Session`](crate::Session) and a perf.data file
//! ([`crate::archive::ArchiveReader`]) both feed this stage with the same
//! [`Pending`] records, in the same rounds, so that a recording read back
//! from its archive yields what the live session yielded.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::attach::Window;
use super::format::EventFormat;
use super::mappings::Mappings;
use super::namespaces::Namespaces;
use super::order::Orderer;
use super::processes::{Describe, Descriptions, ProcessInfo};
use super::session::{Event, Output};
use super::symbolize::Symbolizer;
use super::threads::ThreadTable;

/// A record queued for ordering. Samples are nearly all of them, so the
/// rare large variants are boxed to keep every queued record small.
pub(crate) enum Pending {
    /// `described`: what was read of the process when this, its first
    /// sample, was drained (or was written before it in the archive);
    /// `stack`: the user stack's addresses, innermost first, when its
    /// event records one.
    Sample { id: u64, pid: u32, tid: u32, cpu: u32, raw: Box<[u8]>, stack: Box<[u64]>, described: Option<Box<ProcessInfo>> },
    /// A mapping (MMAP2, or perf's MMAP): kept only while stacks are named.
    Mapped(Box<Mapped>),
    Comm { pid: u32, tid: u32, comm: Box<str>, exec: Option<Box<ProcessInfo>> },
    Fork { pid: u32, tid: u32, ptid: u32 },
    Exit { tid: u32 },
    Namespaces { tid: u32, namespaces: Box<Namespaces> },
    /// A file of `perf record`'s mapped `executable` as the program of
    /// `pid`: its first executable mapping since the start or an exec.
    Program { pid: u32, executable: Box<str> },
    Lost { cpu: u32, count: u64, sideband: bool, thread: Option<u32> },
    Attached { format: Arc<EventFormat>, window: Window },
    NotRecorded(Box<crate::NotRecorded>),
}

/// A mapping of a file into a process, as an MMAP2 record tells it.
pub(crate) struct Mapped {
    pub pid: u32,
    pub start: u64,
    pub len: u64,
    /// The file offset mapped at `start`.
    pub offset: u64,
    pub executable: bool,
    pub path: Box<[u8]>,
}

/// Where a process's full name comes from when its first released event
/// carries none (the drain read one for each process's first sample, so
/// this is for a sample whose round was dropped, or an archive without).
pub(crate) enum Fallback {
    /// `/proc`, read then: a live session.
    Proc,
    /// Nothing: a file, read long after.
    Nothing,
}

impl Fallback {
    fn read(&self, pid: u32) -> ProcessInfo {
        match self {
            Fallback::Proc => ProcessInfo::read(Path::new("/proc"), pid),
            Fallback::Nothing => ProcessInfo::default(),
        }
    }

    /// The mappings of `pid`, a process that mapped its code before the
    /// records began: `/proc/PID/maps` now, for a live session.
    fn read_maps(&self, pid: u32) -> Option<String> {
        match self {
            Fallback::Proc => std::fs::read_to_string(format!("/proc/{pid}/maps")).ok(),
            Fallback::Nothing => None,
        }
    }
}

/// The stage between the rings (or a file) and the outputs.
pub(crate) struct Attribution {
    pub(crate) threads: ThreadTable,
    orderer: Orderer<Pending>,
    by_id: FxHashMap<u64, Arc<EventFormat>>,
    processes: Descriptions,
    /// What each process runs, as far as the records have said, in time
    /// order: its description at its first event or exec, its program as
    /// a `perf record` file mapped it, or, for a child forked since, what
    /// its parent ran then (until it execs, it runs that program). For a
    /// first event that comes with no description.
    programs: FxHashMap<u32, ProcessInfo>,
    fallback: Fallback,
    /// What the drain read of a process at the first of its samples it
    /// read, until the first of its samples in time order is released:
    /// the rings are read one after the other, so under load the sample
    /// read first may be a later one, from another CPU's ring.
    read_ahead: FxHashMap<u32, ProcessInfo>,
    /// Events released.
    pub(crate) events: u64,
    /// Events counted and not released, by perf id (`count_events`).
    counted: FxHashMap<u64, u64>,
    /// The ordering watermark of the round before, up to which exited
    /// threads and superseded names are forgotten.
    forget_before: Option<u64>,
    /// With stacks recorded: each process's mappings, and the names of
    /// what they map.
    stacks: Option<Box<Stacks>>,
}

/// What names the frames of stacks.
#[derive(Default)]
struct Stacks {
    mappings: Mappings,
    symbolizer: Symbolizer,
}

impl Attribution {
    pub(crate) fn new(threads: ThreadTable, fallback: Fallback) -> Attribution {
        Attribution {
            threads,
            orderer: Orderer::new(),
            by_id: FxHashMap::default(),
            processes: Descriptions::default(),
            programs: FxHashMap::default(),
            fallback,
            read_ahead: FxHashMap::default(),
            events: 0,
            counted: FxHashMap::default(),
            forget_before: None,
            stacks: None,
        }
    }

    /// Samples carry stacks: keep each process's mappings from now on,
    /// and name the frames of each stack.
    pub(crate) fn name_stacks(&mut self) {
        self.stacks.get_or_insert_with(Box::default);
    }

    /// Whether mappings are kept: [`Pending::Mapped`] is of any use.
    pub(crate) fn names_stacks(&self) -> bool {
        self.stacks.is_some()
    }

    /// Samples carrying perf id `id` are hits of `format`.
    pub(crate) fn add_event(&mut self, id: u64, format: Arc<EventFormat>) {
        self.by_id.insert(id, format);
    }

    /// Queues a record of this round.
    pub(crate) fn push(&mut self, time: u64, mut pending: Pending) {
        if let Pending::Sample { pid, described: described @ Some(_), .. } = &mut pending {
            self.read_ahead.extend(described.take().map(|info| (*pid, *info)));
        }
        self.orderer.push(time, pending);
    }

    /// Ends a round: releases what is now safely in order.
    pub(crate) fn end_round(&mut self, each: &mut impl FnMut(Output)) {
        let mut orderer = std::mem::take(&mut self.orderer);
        orderer.end_round(&mut |time, p| self.release(time, p, each));
        // Exits and superseded names before the previous round's watermark:
        // one round of grace beyond what ordering needs, for nothing to be
        // named `:TID` or by a name it no longer had.
        if let Some(watermark) = self.forget_before.replace(orderer.released_through().unwrap_or(0)) {
            self.threads.forget_before(watermark);
        }
        self.orderer = orderer;
    }

    /// Releases everything queued: no more records will come.
    pub(crate) fn flush(&mut self, each: &mut impl FnMut(Output)) {
        let mut orderer = std::mem::take(&mut self.orderer);
        orderer.flush(&mut |time, p| self.release(time, p, each));
        self.orderer = orderer;
    }

    /// Counts samples as events without yielding them, given as runs of
    /// `n` samples of one perf id: a session whose events nobody takes,
    /// whose drain only counts them. (Every sample in the rings is of an
    /// attached tracepoint, which `release` counts.)
    pub(crate) fn count_events(&mut self, counted: &[(u64, u64)]) {
        for &(id, n) in counted {
            self.events += n;
            *self.counted.entry(id).or_default() += n;
        }
    }

    /// The events counted without being yielded, by event name (a name
    /// registered again under a new id is summed).
    pub(crate) fn counted_by_name(&self) -> BTreeMap<String, u64> {
        let mut by_name = BTreeMap::new();
        for (id, &n) in &self.counted {
            // Every id counted was described (a sample comes only from an
            // attached tracepoint); one that was not is named by its id.
            let name = self.by_id.get(id).map_or_else(|| format!("perf id {id}"), |f| f.full_name());
            *by_name.entry(name).or_default() += n;
        }
        by_name
    }

    fn release(&mut self, time: u64, pending: Pending, out: &mut impl FnMut(Output)) {
        match pending {
            Pending::Sample { id, pid, tid, cpu, raw, stack, described: _ } => {
                let Some(format) = self.by_id.get(&id) else { return };
                let stack = match &mut self.stacks {
                    Some(stacks) if !stack.is_empty() => {
                        if !stacks.mappings.is_complete(pid) {
                            if let Some(maps) = self.fallback.read_maps(pid) {
                                stacks.mappings.read_maps(pid, &maps);
                            }
                        }
                        let locations: Vec<_> = stack.iter().map(|&address| stacks.mappings.find(pid, address)).collect();
                        stacks.symbolizer.frames(&stack, &locations)
                    }
                    _ => Box::default(),
                };
                let identity = self.threads.identity(pid, tid, time);
                let (fallback, programs, read_ahead) = (&self.fallback, &self.programs, &mut self.read_ahead);
                let read = || read_ahead.remove(&pid).or_else(|| programs.get(&pid).cloned()).unwrap_or_else(|| fallback.read(pid));
                if let Describe::Process(info) = self.processes.event(pid, read) {
                    self.programs.insert(pid, info.clone());
                    out(Output::Process { time_ns: time, pid, info });
                }
                self.events += 1;
                out(Output::Event(Event {
                    time_ns: time,
                    cpu,
                    pid,
                    tid,
                    comm: identity.comm,
                    process: identity.process,
                    namespaces: identity.namespaces,
                    format: format.clone(),
                    raw,
                    stack,
                }));
            }
            Pending::Comm { pid, tid, comm, exec } => {
                if let (Some(stacks), true) = (&mut self.stacks, exec.is_some()) {
                    stacks.mappings.exec(pid);
                }
                self.threads.comm(pid, tid, &comm, exec.is_some(), time);
                if let Some(info) = exec {
                    // The old program is no longer what it runs; an exec
                    // told before its program was mapped waits for that.
                    self.programs.remove(&pid);
                    if info.executable.is_some() {
                        self.programs.insert(pid, (*info).clone());
                    }
                    if let Describe::Process(info) = self.processes.exec(pid, *info) {
                        out(Output::Process { time_ns: time, pid, info });
                    }
                }
            }
            Pending::Fork { pid, tid, ptid } => {
                if pid == tid {
                    if let Some(parent) = self.threads.pid_at(ptid, time).and_then(|parent| self.programs.get(&parent)) {
                        self.programs.insert(pid, parent.clone());
                    }
                }
                if let Some(stacks) = &mut self.stacks {
                    if let Some(parent) = self.threads.pid_at(ptid, time) {
                        stacks.mappings.fork(parent, pid);
                    }
                }
                self.threads.fork(pid, tid, ptid, time);
            }
            Pending::Program { pid, executable } => {
                // Only a process's first: later ones are libraries, and a
                // forked child's are its parent's program's libraries.
                self.programs.entry(pid).or_insert_with(|| ProcessInfo { executable: Some(executable.into()), ..ProcessInfo::default() });
            }
            Pending::Mapped(m) => {
                if let Some(stacks) = &mut self.stacks {
                    stacks.mappings.map(m.pid, m.start, m.len, m.offset, m.executable, &m.path);
                }
            }
            Pending::Exit { tid } => {
                if let Some(pid) = self.threads.pid_at(tid, time) {
                    if self.processes.is_described(pid) {
                        out(Output::Exit { time_ns: time, pid, tid });
                    }
                    if pid == tid {
                        self.processes.exit(pid);
                        self.programs.remove(&pid);
                        if let Some(stacks) = &mut self.stacks {
                            stacks.mappings.exit(pid);
                        }
                    }
                }
                self.threads.exit(tid, time);
            }
            Pending::Namespaces { tid, namespaces } => self.threads.namespaces(tid, *namespaces, time),
            Pending::Lost { cpu, count, sideband, thread } => out(Output::Lost { cpu, time_ns: time, count, sideband, thread }),
            Pending::Attached { format, window } => out(Output::Attached { format, time_ns: time, window }),
            Pending::NotRecorded(not_recorded) => out(Output::NotRecorded(not_recorded)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAT: &str = "name: ev\nID: 7\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
                          \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
                          \tfield:u32 n;\toffset:8;\tsize:4;\tsigned:0;\n";

    fn sample(pid: u32) -> Pending {
        Pending::Sample { id: 1, pid, tid: pid, cpu: 0, raw: vec![0; 12].into(), stack: Default::default(), described: None }
    }

    fn program(pid: u32, executable: &str) -> Pending {
        Pending::Program { pid, executable: executable.into() }
    }

    #[test]
    fn counted_events_are_named_by_their_tracepoint_and_summed_by_name() {
        let mut a = attribution();
        // The same tracepoint's id on a second CPU.
        a.add_event(2, Arc::new(EventFormat::parse("user_events", FORMAT).unwrap()));
        a.count_events(&[(1, 3), (2, 4)]);
        a.count_events(&[(1, 1), (9, 2), (2, 0)]);
        assert_eq!(a.events, 10);
        let named = BTreeMap::from([("perf id 9".to_string(), 2), ("user_events:ev".to_string(), 8)]);
        assert_eq!(a.counted_by_name(), named);
    }

    /// A `perf record` file's attribution: processes as its records say.
    fn attribution() -> Attribution {
        let mut a = Attribution::new(ThreadTable::new(), Fallback::Nothing);
        a.add_event(1, Arc::new(EventFormat::parse("user_events", FORMAT).unwrap()));
        a
    }

    /// The executable each described process was given, by pid.
    fn executables(a: &mut Attribution) -> Vec<(u32, Option<String>)> {
        let mut told = Vec::new();
        a.flush(&mut |o| {
            if let Output::Process { pid, info, .. } = o {
                told.push((pid, info.executable));
            }
        });
        told
    }

    #[test]
    fn a_forked_child_runs_its_parent_s_program_whatever_the_file_order() {
        let mut a = attribution();
        // perf's synthesized start: the parent, its program, then a library.
        a.threads.synthesize(100, 100, "server", 0);
        a.push(0, program(100, "/usr/bin/server"));
        a.push(0, program(100, "/usr/lib/libc.so.6"));
        // The child's ring was read before its parent's: its event and its
        // first mapping (a library it loaded) come before its FORK.
        a.push(30, sample(200));
        a.push(20, program(200, "/usr/lib/libplugin.so"));
        a.push(10, Pending::Fork { pid: 200, tid: 200, ptid: 100 });
        a.push(40, sample(100));
        assert_eq!(
            executables(&mut a),
            [(200, Some("/usr/bin/server".into())), (100, Some("/usr/bin/server".into()))]
        );
    }

    #[test]
    fn an_exec_replaces_the_program_and_its_next_mapping_is_the_new_one() {
        let mut a = attribution();
        a.threads.synthesize(100, 100, "sh", 0);
        a.push(0, program(100, "/bin/sh"));
        // Told before its program was mapped (held past its round).
        a.push(10, Pending::Comm { pid: 100, tid: 100, comm: "worker".into(), exec: Some(Box::default()) });
        a.push(11, program(100, "/usr/bin/worker"));
        a.push(12, program(100, "/usr/lib/libc.so.6"));
        a.push(20, sample(100));
        // A thread of its own is no new process: nothing is inherited.
        a.push(30, Pending::Fork { pid: 100, tid: 101, ptid: 100 });
        assert_eq!(executables(&mut a), [(100, Some("/usr/bin/worker".into()))]);
    }

    #[test]
    fn a_process_that_exited_leaves_no_program_for_a_reused_pid() {
        let mut a = attribution();
        a.threads.synthesize(100, 100, "old", 0);
        a.push(0, program(100, "/usr/bin/old"));
        a.push(10, Pending::Exit { tid: 100 });
        a.push(20, sample(100));
        assert_eq!(executables(&mut a), [(100, None)]);
    }

    #[test]
    fn a_description_read_with_a_later_sample_names_the_process_at_its_first_event() {
        let mut a = attribution();
        // A short-lived process's three events, on two CPUs, read in one
        // round: the ring read first held its second event, which the
        // drain described; the process was gone at the release.
        let described = ProcessInfo { executable: Some("/usr/bin/short-lived".into()), pid_in_container: Some(1), ..ProcessInfo::default() };
        let with_description = |pid| match sample(pid) {
            Pending::Sample { id, pid, tid, cpu, raw, stack, .. } => Pending::Sample { id, pid, tid, cpu, raw, stack, described: Some(Box::new(described.clone())) },
            _ => unreachable!(),
        };
        a.push(20, with_description(4_000_000));
        a.push(10, sample(4_000_000));
        a.push(30, sample(4_000_000));
        let mut told = Vec::new();
        a.flush(&mut |o| match o {
            Output::Process { time_ns, info, .. } => told.push((time_ns, info.executable, info.pid_in_container)),
            Output::Event(e) => told.push((e.time_ns, None, None)),
            _ => {}
        });
        assert_eq!(told, [(10, Some("/usr/bin/short-lived".into()), Some(1)), (10, None, None), (20, None, None), (30, None, None)]);
    }
}

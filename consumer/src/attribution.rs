//! Who emitted each record: records from every ring, put in one time order,
//! replay the sideband into the thread table, and each sample leaves as an
//! [`Output::Event`] under the names its thread and process had then.
//!
//! A live [`Session`](crate::Session) and a perf.data file
//! ([`crate::archive::ArchiveReader`]) both feed this stage with the same
//! [`Pending`] records, in the same rounds, so that a recording read back
//! from its archive yields what the live session yielded.

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::attach::Window;
use super::format::EventFormat;
use super::namespaces::Namespaces;
use super::order::Orderer;
use super::processes::{Describe, Descriptions, ProcessInfo};
use super::session::{Event, Output};
use super::threads::ThreadTable;

/// A record queued for ordering. Samples are nearly all of them, so the
/// rare large variants are boxed to keep every queued record small.
pub(crate) enum Pending {
    /// `described`: what was read of the process when this, its first
    /// sample, was drained (or was written before it in the archive).
    Sample { id: u64, pid: u32, tid: u32, cpu: u32, raw: Box<[u8]>, described: Option<Box<ProcessInfo>> },
    Comm { pid: u32, tid: u32, comm: Box<str>, exec: Option<Box<ProcessInfo>> },
    Fork { pid: u32, tid: u32, ptid: u32 },
    Exit { tid: u32 },
    Namespaces { tid: u32, namespaces: Box<Namespaces> },
    Lost { cpu: u32, count: u64, sideband: bool },
    Attached { format: Arc<EventFormat>, window: Window },
    NotRecorded(Box<crate::NotRecorded>),
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
}

/// The stage between the rings (or a file) and the outputs.
pub(crate) struct Attribution {
    pub(crate) threads: ThreadTable,
    orderer: Orderer<Pending>,
    by_id: FxHashMap<u64, Arc<EventFormat>>,
    processes: Descriptions,
    fallback: Fallback,
    /// Events released.
    pub(crate) events: u64,
    /// The ordering watermark of the round before, up to which exited
    /// threads and superseded names are forgotten.
    forget_before: Option<u64>,
}

impl Attribution {
    pub(crate) fn new(threads: ThreadTable, fallback: Fallback) -> Attribution {
        Attribution {
            threads,
            orderer: Orderer::new(),
            by_id: FxHashMap::default(),
            processes: Descriptions::default(),
            fallback,
            events: 0,
            forget_before: None,
        }
    }

    /// Samples carrying perf id `id` are hits of `format`.
    pub(crate) fn add_event(&mut self, id: u64, format: Arc<EventFormat>) {
        self.by_id.insert(id, format);
    }

    /// Queues a record of this round.
    pub(crate) fn push(&mut self, time: u64, pending: Pending) {
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

    /// Counts `n` samples as events without yielding them: a session whose
    /// events nobody takes, whose drain only counts them. (Every sample in
    /// the rings is of an attached tracepoint, which `release` counts.)
    pub(crate) fn count_events(&mut self, n: u64) {
        self.events += n;
    }

    fn release(&mut self, time: u64, pending: Pending, out: &mut impl FnMut(Output)) {
        match pending {
            Pending::Sample { id, pid, tid, cpu, raw, described } => {
                let Some(format) = self.by_id.get(&id) else { return };
                let identity = self.threads.identity(pid, tid, time);
                let fallback = &self.fallback;
                let read = || described.map_or_else(|| fallback.read(pid), |info| *info);
                if let Describe::Process(info) = self.processes.event(pid, read) {
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
                }));
            }
            Pending::Comm { pid, tid, comm, exec } => {
                self.threads.comm(pid, tid, &comm, exec.is_some(), time);
                if let Some(Describe::Process(info)) = exec.map(|info| self.processes.exec(pid, *info)) {
                    out(Output::Process { time_ns: time, pid, info });
                }
            }
            Pending::Fork { pid, tid, ptid } => self.threads.fork(pid, tid, ptid, time),
            Pending::Exit { tid } => {
                if let Some(pid) = self.threads.pid_at(tid, time) {
                    if self.processes.is_described(pid) {
                        out(Output::Exit { time_ns: time, pid, tid });
                    }
                    if pid == tid {
                        self.processes.exit(pid);
                    }
                }
                self.threads.exit(tid, time);
            }
            Pending::Namespaces { tid, namespaces } => self.threads.namespaces(tid, *namespaces, time),
            Pending::Lost { cpu, count, sideband } => out(Output::Lost { cpu, time_ns: time, count, sideband }),
            Pending::Attached { format, window } => out(Output::Attached { format, time_ns: time, window }),
            Pending::NotRecorded(not_recorded) => out(Output::NotRecorded(not_recorded)),
        }
    }
}

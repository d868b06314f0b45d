//! Which processes a recording has named, and by what full name.
//!
//! A perf record names a thread by its 16-byte comm. A timeline wants the
//! process's real name: the executable it ran and its command line. Those
//! live only in `/proc/PID`, so they are read as early as the session can:
//! when the ring yields the exec's COMM record, or, for a process that was
//! running before the session, when its first event is released. A process
//! is described once per exec, and only if it emitted an event: the rest of
//! the system's processes cost nothing.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A process's full name, as far as `/proc` still showed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessInfo {
    /// The executable's path (`/proc/PID/exe`); None if it had exited.
    pub executable: Option<String>,
    /// The arguments (`/proc/PID/cmdline`); None if it had exited or is a
    /// kernel thread.
    pub command_line: Option<Vec<String>>,
}

impl ProcessInfo {
    /// Reads `proc_root/PID` (normally `/proc`).
    pub fn read(proc_root: &Path, pid: u32) -> ProcessInfo {
        let dir = proc_root.join(pid.to_string());
        let executable = std::fs::read_link(dir.join("exe")).ok().map(|p| p.to_string_lossy().into_owned());
        let command_line = std::fs::read(dir.join("cmdline")).ok().filter(|b| !b.is_empty()).map(|bytes| {
            let bytes = bytes.strip_suffix(&[0]).unwrap_or(&bytes);
            bytes.split(|&b| b == 0).map(|arg| String::from_utf8_lossy(arg).into_owned()).collect()
        });
        ProcessInfo { executable, command_line }
    }
}

/// The processes described so far, and what was read at their execs.
#[derive(Debug, Default)]
pub(crate) struct Descriptions {
    /// Read at an exec, waiting for the process's first event.
    read_at_exec: HashMap<u32, ProcessInfo>,
    /// Described since their last exec.
    described: HashSet<u32>,
}

/// What the session should say about a process.
#[derive(Debug, PartialEq)]
pub(crate) enum Describe {
    /// Nothing: not one of the processes that emitted events.
    Nothing,
    /// Emit this description of the process.
    Process(ProcessInfo),
}

impl Descriptions {
    /// The process exec'd; `info` was read when its COMM record came. If it
    /// had events before, it is described again now, under its new name.
    pub(crate) fn exec(&mut self, pid: u32, info: ProcessInfo) -> Describe {
        if self.described.contains(&pid) {
            Describe::Process(info)
        } else {
            self.read_at_exec.insert(pid, info);
            Describe::Nothing
        }
    }

    /// The process emitted an event: describe it if not yet done.
    pub(crate) fn event(&mut self, pid: u32, read: impl FnOnce() -> ProcessInfo) -> Describe {
        if !self.described.insert(pid) {
            return Describe::Nothing;
        }
        Describe::Process(self.read_at_exec.remove(&pid).unwrap_or_else(read))
    }

    /// Whether the process has emitted events (its exits are then told).
    pub(crate) fn is_described(&self, pid: u32) -> bool {
        self.described.contains(&pid)
    }

    /// The process ended: forget it, so a reused pid is described afresh.
    pub(crate) fn exit(&mut self, pid: u32) {
        self.described.remove(&pid);
        self.read_at_exec.remove(&pid);
    }

    /// How many processes are remembered (bounded by the live ones).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.described.len() + self.read_at_exec.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(exe: &str) -> ProcessInfo {
        ProcessInfo { executable: Some(exe.into()), command_line: Some(vec![exe.into(), "--flag".into()]) }
    }

    #[test]
    fn a_process_is_described_at_its_first_event_with_what_its_exec_read() {
        let mut d = Descriptions::default();
        assert_eq!(d.exec(7, info("/bin/worker")), Describe::Nothing);
        assert_eq!(d.event(7, || panic!("read at exec already")), Describe::Process(info("/bin/worker")));
        assert_eq!(d.event(7, || panic!("described already")), Describe::Nothing);
    }

    #[test]
    fn an_exec_after_events_describes_the_process_again() {
        let mut d = Descriptions::default();
        assert_eq!(d.event(7, || info("/bin/sh")), Describe::Process(info("/bin/sh")));
        assert_eq!(d.exec(7, info("/bin/worker")), Describe::Process(info("/bin/worker")));
    }

    #[test]
    fn exits_forget_so_memory_follows_the_live_processes() {
        let mut d = Descriptions::default();
        for pid in 0..1000 {
            d.exec(pid, info("/bin/x"));
            d.event(pid, ProcessInfo::default);
            d.exit(pid);
        }
        assert_eq!(d.len(), 0);
    }

    #[test]
    fn this_process_reads_as_its_own_executable_and_arguments() {
        let me = ProcessInfo::read(Path::new("/proc"), std::process::id());
        assert_eq!(me.executable.as_deref(), std::env::current_exe().ok().map(|p| p.to_string_lossy().into_owned()).as_deref());
        assert_eq!(me.command_line.unwrap(), std::env::args().collect::<Vec<_>>());
    }
}

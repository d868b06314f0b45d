//! The threads that exist when a session starts, read from `/proc`.
//!
//! Only what attribution needs: each thread's pid, tid and comm, and with
//! `namespaces` the process's namespaces (applied to its threads: reading
//! seven links per thread would slow every session start for a case,
//! threads of one process in different namespaces, that the kernel's
//! records cover from then on anyway). Each read is stamped with
//! CLOCK_MONOTONIC taken just before it, so any record the kernel reports
//! after the stamp is newer than what we read (see `threads.rs`). Threads
//! that vanish mid-walk are skipped.

use std::path::Path;
use std::sync::Arc;

use super::namespaces::Namespaces;
use super::sys::monotonic_ns;
use super::threads::ThreadTable;

/// A thread as `/proc` showed it.
pub(crate) struct ThreadAtStart<'a> {
    pub pid: u32,
    pub tid: u32,
    pub comm: &'a str,
    /// When its name was read.
    pub time: u64,
    /// Its process's namespaces, and when they were read.
    pub namespaces: Option<(&'a Namespaces, u64)>,
}

/// Walks `proc_root` (normally `/proc`) into `table`, showing each thread
/// to `on_thread` too (the archive writes them); returns threads read.
pub(crate) fn snapshot(proc_root: &Path, table: &mut ThreadTable, namespaces: bool, mut on_thread: impl FnMut(&ThreadAtStart<'_>)) -> usize {
    let mut count = 0;
    let Ok(processes) = std::fs::read_dir(proc_root) else { return 0 };
    for process in processes.flatten() {
        let Some(pid) = process.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Ok(tasks) = std::fs::read_dir(process.path().join("task")) else { continue };
        let ns_stamp = monotonic_ns();
        let process_namespaces = if namespaces { Namespaces::read(&process.path()).map(Arc::new) } else { None };
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            let stamp = monotonic_ns();
            let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) else { continue };
            let comm = comm.strip_suffix('\n').unwrap_or(&comm);
            table.synthesize(pid, tid, comm, stamp);
            if let Some(ns) = &process_namespaces {
                table.synthesize_namespaces(tid, ns.clone(), ns_stamp);
            }
            on_thread(&ThreadAtStart { pid, tid, comm, time: stamp, namespaces: process_namespaces.as_deref().map(|ns| (ns, ns_stamp)) });
            count += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_namespaces_none_are_read() {
        let mut table = ThreadTable::new();
        snapshot(Path::new("/proc"), &mut table, false, |_| {});
        let me = std::process::id();
        assert_eq!(table.identity(me, me, u64::MAX).namespaces, None);
    }

    #[test]
    fn this_thread_is_found_with_its_name() {
        let mut table = ThreadTable::new();
        let n = snapshot(Path::new("/proc"), &mut table, true, |_| {});
        assert!(n >= 1);
        let me = std::process::id();
        let comm = std::fs::read_to_string(format!("/proc/{me}/comm")).unwrap();
        let id = table.identity(me, me, u64::MAX);
        assert_eq!(&*id.comm, comm.trim_end());
        assert_eq!(id.namespaces.as_deref(), Namespaces::read(Path::new("/proc/self")).as_ref());
    }
}

//! Each process's code mappings over time: what turns an address of a
//! recorded stack into a file and an offset in it.
//!
//! Fed in time order with the kernel's MMAP2 records (and, for a process
//! that was running before the session, its `/proc/PID/maps` read when its
//! first event was drained), so that an address is looked up in the
//! mappings its process had when it emitted the event. An exec replaces
//! them all (the kernel writes the exec's COMM before the new program's
//! MMAP2s); a forked process starts with its parent's, as the kernel copies
//! them without a record; a newer mapping replaces what it overlaps.
//!
//! A process's table is complete once it began with what the process had:
//! at its exec, from a complete parent at its fork, or from its
//! `/proc/PID/maps`. One built only of the MMAP2s of a process that was
//! running before the session (a library it loaded since) is not, and its
//! first event reads `/proc/PID/maps` for the rest.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

/// One mapping of a file's bytes into memory.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping {
    start: u64,
    end: u64,
    /// The file offset mapped at `start`.
    offset: u64,
    path: Arc<str>,
}

/// Where an address is: the file mapped there, and the file offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file, as the process named it when it mapped it.
    pub path: Arc<str>,
    /// The address's offset in the file.
    pub offset: u64,
}

/// Every process's code mappings, as of the records applied so far.
#[derive(Default)]
pub(crate) struct Mappings {
    /// Each process's mappings, sorted by start and not overlapping.
    by_pid: FxHashMap<u32, Vec<Mapping>>,
    /// One copy of each path, however many processes map it.
    paths: FxHashSet<Arc<str>>,
    /// The processes whose table is complete (see the module's docs).
    complete: FxHashSet<u32>,
}

impl Mappings {
    /// `pid` mapped `len` bytes of `path` from file offset `offset` at
    /// `start`. Only executable mappings of files hold the code a stack
    /// points into; others are no use here (`[heap]`, `//anon`, data).
    pub(crate) fn map(&mut self, pid: u32, start: u64, len: u64, offset: u64, executable: bool, path: &[u8]) {
        let Some(end) = start.checked_add(len).filter(|&end| end > start) else { return };
        let is_code = executable && (path.starts_with(b"/") || path == b"[vdso]");
        let list = self.by_pid.entry(pid).or_default();
        // What the new mapping covers is no longer what was there: cut it
        // out of the older ones (split where it lands in the middle).
        let mut kept = Vec::with_capacity(list.len() + 2);
        for old in list.drain(..) {
            if old.end <= start || old.start >= end {
                kept.push(old);
                continue;
            }
            if old.start < start {
                kept.push(Mapping { end: start, ..old.clone() });
            }
            if old.end > end {
                kept.push(Mapping { start: end, offset: old.offset + (end - old.start), ..old });
            }
        }
        if is_code {
            let path = String::from_utf8_lossy(path);
            let path = match self.paths.get(&*path) {
                Some(p) => p.clone(),
                None => {
                    let p: Arc<str> = path.into();
                    self.paths.insert(p.clone());
                    p
                }
            };
            kept.push(Mapping { start, end, offset, path });
        }
        kept.sort_by_key(|m| m.start);
        *list = kept;
    }

    /// `pid` exec'd: its old program's mappings are gone.
    pub(crate) fn exec(&mut self, pid: u32) {
        self.by_pid.remove(&pid);
        self.complete.insert(pid);
    }

    /// `child`, a new process, was forked from `parent`: it has the same
    /// mappings (a new thread, `child == parent`, shares them already).
    pub(crate) fn fork(&mut self, parent: u32, child: u32) {
        if parent == child {
            return;
        }
        match self.by_pid.get(&parent).cloned() {
            Some(list) => self.by_pid.insert(child, list),
            None => self.by_pid.remove(&child),
        };
        if self.complete.contains(&parent) {
            self.complete.insert(child);
        } else {
            self.complete.remove(&child);
        }
    }

    /// `pid` exited: a later process of the same pid starts afresh.
    pub(crate) fn exit(&mut self, pid: u32) {
        self.by_pid.remove(&pid);
        self.complete.remove(&pid);
    }

    /// Whether `pid`'s table holds all its code (see the module's docs).
    pub(crate) fn is_complete(&self, pid: u32) -> bool {
        self.complete.contains(&pid)
    }

    /// The file and offset of `address` in `pid`, if code is mapped there.
    pub(crate) fn find(&self, pid: u32, address: u64) -> Option<Location> {
        let list = self.by_pid.get(&pid)?;
        let at = list.partition_point(|m| m.start <= address).checked_sub(1)?;
        let m = &list[at];
        (address < m.end).then(|| Location { path: m.path.clone(), offset: m.offset + (address - m.start) })
    }

    /// Applies `/proc/PID/maps` text: the mappings of a process that was
    /// running before the session saw it map anything.
    pub(crate) fn read_maps(&mut self, pid: u32, text: &str) {
        for line in text.lines() {
            if let Some((start, len, offset, executable, path)) = parse_maps_line(line) {
                self.map(pid, start, len, offset, executable, path.as_bytes());
            }
        }
        self.complete.insert(pid);
    }
}

/// One line of `/proc/PID/maps`: `START-END PERMS OFFSET DEV INODE PATH`,
/// as (start, length, offset, executable, path).
pub(crate) fn parse_maps_line(line: &str) -> Option<(u64, u64, u64, bool, &str)> {
    let mut parts = line.splitn(6, ' ');
    let (range, perms, offset) = (parts.next()?, parts.next()?, parts.next()?);
    let (_dev, _inode) = (parts.next()?, parts.next()?);
    let path = parts.next().unwrap_or("").trim_start();
    let (start, end) = range.split_once('-')?;
    let (start, end) = (u64::from_str_radix(start, 16).ok()?, u64::from_str_radix(end, 16).ok()?);
    let offset = u64::from_str_radix(offset, 16).ok()?;
    let len = end.checked_sub(start)?;
    Some((start, len, offset, perms.as_bytes().get(2) == Some(&b'x'), path))
}

#[cfg(test)]
mod tests;

//! One producer process on the shared-memory transport, as the recorder
//! holds it: its registry mapped, its slots read, its enable words set.
//!
//! Writing an enable word is the one thing here that could hurt the
//! producer: a word written after it was freed corrupts whatever took its
//! place. So a word is written only (1) under the slot's BUSY state, which
//! the producer's unregistration waits out (`usertrace::shm_layout`), and
//! (2) just after checking that the process is still the one that made
//! the registry: same start time, and the registry still mapped in it. An
//! exec replaces the image and drops the mapping, so a stale registry
//! from before an exec fails (2). What remains is a window of
//! microseconds between that check and the write in which the process
//! would have to exec; the kernel's own enablers have no such window.
//!
//! # Safety
//! The registry is mapped shared with a process we do not trust. Its words
//! are accessed only through atomics at aligned offsets inside the
//! mapping, and its bytes are copied out before they are parsed.
#![allow(unsafe_code)]

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use memmap2::{MmapMut, MmapOptions};
use usertrace::shm_layout::{registry, slot, RegistryHeader, Slot, REGISTRY_HEADER_LEN, REGISTRY_LEN, SLOTS, SLOT_LEN};
use usertrace::Errno;

use super::place::{refusal, Place};
use crate::processes::ProcessInfo;
use crate::sys;

/// A slot the recorder has looked at.
pub(crate) struct KnownSlot {
    pub(crate) slot: Slot,
    /// The session's format for it, if it matched a pattern.
    pub(crate) attached: Option<super::Attached>,
    /// Whether we set its enable word (and must clear it at the end).
    pub(crate) enabled: bool,
}

/// A producer the recorder holds.
pub(crate) struct Producer {
    /// Its pid as it knows it (its registry's and its files' names say
    /// it): in a container, its pid there.
    pub(crate) pid: u32,
    /// Its pid here, under which /proc shows it and its events go: `pid`
    /// translated through `NSpid` for a container's (`containers.rs`).
    pub(crate) host_pid: u32,
    /// The directory its files are in, held open.
    pub(crate) place: Arc<Place>,
    /// Its registry's file name there.
    pub(crate) name: String,
    /// Its registry's instance: its rings' names carry it.
    pub(crate) instance: u32,
    start_time: u64,
    inode: u64,
    pub(crate) path: PathBuf,
    map: MmapMut,
    /// The slot generation last read, or None before the first read.
    generation: Option<u32>,
    pub(crate) slots: Vec<Option<KnownSlot>>,
    /// Its threads' rings, by file name.
    pub(crate) rings: Vec<super::ring::ShmRing>,
    /// Whether we hold it (`claim`): only once one of its tracepoints
    /// matched, so that recorders of other events can take it instead.
    pub(crate) held: bool,
    /// A rescan came since the slots were last read: read them after the
    /// rings.
    pub(crate) slots_due: bool,
    /// The inode of its PID namespace, in which `pid` is its pid; 0 if it
    /// did not say (see `registry::PID_NAMESPACE`).
    pub(crate) pid_namespace: u64,
    /// What the session says of the process at its first event, read from
    /// /proc when we took it (`describe`): a container's producer is read
    /// only at the poll interval, by when one that emitted and exited at
    /// once has no /proc left to read.
    pub(crate) description: Option<Box<ProcessInfo>>,
}

/// Why a registry was not taken.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Not a file we accept (owner, mode, length) or not our layout.
    Malformed(String),
    /// Not finished yet (no magic, or not yet its full length), or its
    /// process not yet among the container's: a producer is making it;
    /// looked at again at the next scan.
    Unfinished,
    /// Another recorder holds it.
    Held { recorder: u32 },
}

impl Producer {
    /// Opens and checks the registry `name` in `place`; [`claim`](Self::claim)
    /// takes it. The inode is kept so that the file is removed only if
    /// it is still this one. In a container's place, its pid is looked
    /// for among `members`, the host pids of the container's processes.
    pub(crate) fn open(place: &Arc<Place>, name: &str, members: &[u32]) -> Result<Producer, Refusal> {
        let file = place.open_file(name).map_err(|e| Refusal::Malformed(refusal(&e)))?;
        let meta = file.metadata().map_err(|e| Refusal::Malformed(format!("cannot stat it: {e}")))?;
        let euid = sys::effective_uid();
        if meta.file_type().is_file() && meta.len() < REGISTRY_LEN as u64 {
            return Err(Refusal::Unfinished);
        }
        if !meta.file_type().is_file() || meta.len() != REGISTRY_LEN as u64 {
            return Err(Refusal::Malformed(format!("not a regular file of {REGISTRY_LEN} bytes")));
        }
        if meta.mode() & 0o077 != 0 || (euid != 0 && meta.uid() != euid) {
            return Err(Refusal::Malformed("readable by others, or another user's".into()));
        }
        // SAFETY: a shared mapping of a regular file of exactly this length
        // (checked above); see the module's Safety paragraph.
        let map = unsafe { MmapOptions::new().len(REGISTRY_LEN).map_mut(&file) }
            .map_err(|e| Refusal::Malformed(format!("cannot map it: {e}")))?;
        let mut header_bytes = [0u8; REGISTRY_HEADER_LEN];
        copy_out(&map, 0, &mut header_bytes);
        // Pairs with the producer's fence before it writes the magic: with
        // the magic seen, the rest of the header is complete.
        std::sync::atomic::fence(Ordering::Acquire);
        if header_bytes[..8] == [0; 8] {
            return Err(Refusal::Unfinished);
        }
        let header = RegistryHeader::parse(&header_bytes).map_err(|e| Refusal::Malformed(e.to_string()))?;
        let named = usertrace::shm_layout::parse_registry_file_name(name);
        if named != Some((header.pid, header.instance)) {
            return Err(Refusal::Malformed(format!("its header says pid {} instance {}, not what its name says", header.pid, header.instance)));
        }
        let host_pid = if place.in_container {
            // Not (yet) among the processes the scan saw: one that started
            // since, looked at again; or one gone, whose events no host
            // pid could carry.
            super::containers::host_pid(members, header.pid, header.pid_namespace).ok_or(Refusal::Unfinished)?
        } else {
            header.pid
        };
        let producer = Producer {
            pid: header.pid,
            host_pid,
            place: place.clone(),
            name: name.to_owned(),
            pid_namespace: header.pid_namespace,
            instance: header.instance,
            start_time: header.start_time,
            inode: meta.ino(),
            path: place.path(name),
            map,
            generation: None,
            slots: (0..SLOTS).map(|_| None).collect(),
            rings: Vec::new(),
            held: false,
            slots_due: false,
            description: None,
        };
        // A producer that has already exited (a short-lived fork child)
        // is still opened: its rings hold what it wrote while enabled.
        Ok(producer)
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        debug_assert!(offset % 4 == 0 && offset + 4 <= self.map.len());
        // SAFETY: a 4-aligned offset inside the page-aligned mapping, which
        // lives as long as self; shared with the producer, hence atomic.
        unsafe { &*(self.map.as_ptr().add(offset) as *const AtomicU32) }
    }

    /// Takes the registry for `recorder`: from nobody, or from a recorder
    /// that no longer exists.
    pub(crate) fn claim(&mut self, recorder: u32) -> Result<(), Refusal> {
        let word = self.word(registry::RECORDER);
        loop {
            let holder = word.load(Ordering::Acquire);
            if holder == recorder {
                self.held = true;
                return Ok(());
            }
            if holder != 0 && sys::process_exists(holder) {
                return Err(Refusal::Held { recorder: holder });
            }
            if word.compare_exchange(holder, recorder, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                self.held = true;
                return Ok(());
            }
        }
    }

    /// Reads the process's description now, before its events are turned
    /// on. One gone already (a fork child that wrote and left before we
    /// looked) keeps what its registry says: in a container, its pid there.
    pub(crate) fn describe(&mut self) {
        let mut info = ProcessInfo::read(std::path::Path::new("/proc"), self.host_pid);
        if self.place.in_container && self.pid != self.host_pid {
            info.pid_in_container.get_or_insert(self.pid);
        }
        self.description = Some(Box::new(info));
    }

    /// The recorder the registry names, if any (it may have died).
    pub(crate) fn recorder(&self) -> Option<u32> {
        Some(self.word(registry::RECORDER).load(Ordering::Acquire)).filter(|&r| r != 0)
    }

    /// Gives the registry back, so another recorder may take it and the
    /// producer's exiting threads remove their own rings.
    pub(crate) fn release(&self, recorder: u32) {
        if !self.held {
            return;
        }
        let _ = self.word(registry::RECORDER).compare_exchange(recorder, 0, Ordering::AcqRel, Ordering::Relaxed);
    }

    /// Removes the registry and ring files, if they are still the ones we
    /// mapped: for a producer that is gone and whose rings were read to
    /// the end (a thread that exits without its destructors, as after
    /// `_exit`, leaves its ring unclosed).
    pub(crate) fn remove_files(&self) {
        for ring in &self.rings {
            ring.remove_file();
        }
        self.place.remove_if(&self.name, self.inode);
    }

    /// Whether the process that made the registry still runs it: the same
    /// start time, and the registry still mapped (an exec unmaps it).
    pub(crate) fn is_alive(&self) -> bool {
        start_time_of(self.host_pid) == Some(self.start_time) && maps_inode(self.host_pid, self.inode)
    }

    /// Whether the slots were read at least once.
    pub(crate) fn generation_read(&self) -> bool {
        self.generation.is_some()
    }

    /// The live slots, if the generation moved since the last call: each
    /// one new or changed, with its index.
    pub(crate) fn changed_slots(&mut self) -> Vec<(usize, Result<Slot, String>)> {
        let generation = self.word(registry::GENERATION).load(Ordering::Acquire);
        if self.generation == Some(generation) {
            return Vec::new();
        }
        self.generation = Some(generation);
        let mut changed = Vec::new();
        let mut bytes = vec![0u8; SLOT_LEN];
        for index in 0..SLOTS {
            let at = REGISTRY_HEADER_LEN + index * SLOT_LEN;
            // A freed slot keeps what it was: records written before the
            // unregistration may still be unread. A reuse replaces it.
            if self.word(at + slot::STATE).load(Ordering::Acquire) == slot::STATE_FREE {
                continue;
            }
            copy_out(&self.map, at, &mut bytes);
            match Slot::parse(&bytes) {
                Ok(Some(parsed)) => {
                    if self.slots[index].as_ref().is_some_and(|known| known.slot == parsed) {
                        continue;
                    }
                    self.slots[index] = None;
                    changed.push((index, Ok(parsed)));
                }
                // BUSY with us gone, or being filled in: looked at again later.
                Ok(None) => {}
                Err(e) => changed.push((index, Err(e.to_string()))),
            }
        }
        changed
    }

    /// Sets (1) or clears (0) the enable word of slot `index`, under the
    /// slot's BUSY state; refuses if the process is no longer the one that
    /// registered it. The caller looked the slot up in `self.slots`.
    pub(crate) fn write_enable(&self, index: usize, address: u64, value: u32) -> Result<(), Errno> {
        let state = self.word(REGISTRY_HEADER_LEN + index * SLOT_LEN + slot::STATE);
        if state.compare_exchange(slot::STATE_LIVE, slot::STATE_BUSY, Ordering::AcqRel, Ordering::Acquire).is_err() {
            // Being unregistered: its word is no longer ours to write.
            return Err(Errno(libc::ESTALE));
        }
        // The address may have changed between our copy and the swap if the
        // producer reused the slot: read it again under BUSY.
        let mut address_bytes = [0u8; 8];
        copy_out(&self.map, REGISTRY_HEADER_LEN + index * SLOT_LEN + slot::ENABLE_ADDRESS, &mut address_bytes);
        let result = if u64::from_ne_bytes(address_bytes) != address {
            Err(Errno(libc::ESTALE))
        } else if !self.is_alive() {
            Err(Errno(libc::ESRCH))
        } else {
            sys::write_process_word(self.host_pid, address, value)
        };
        // Back to LIVE unless the producer took the slot (it may, only if it
        // believed us dead).
        let _ = state.compare_exchange(slot::STATE_BUSY, slot::STATE_LIVE, Ordering::AcqRel, Ordering::Relaxed);
        result
    }

    /// Whether the kernel lets us read the producer's memory: the rights
    /// that writing its enable words needs.
    pub(crate) fn check_rights(&self, address: u64) -> Result<(), Errno> {
        sys::read_process_word(self.host_pid, address).map(drop)
    }
}

/// Copies `out.len()` bytes of the mapping from `at`.
fn copy_out(map: &MmapMut, at: usize, out: &mut [u8]) {
    assert!(at + out.len() <= map.len(), "copies stay inside the mapping");
    // SAFETY: the range is inside the mapping (asserted); copied, never
    // borrowed, as the producer may write it concurrently.
    unsafe { std::ptr::copy_nonoverlapping(map.as_ptr().add(at), out.as_mut_ptr(), out.len()) };
}

/// Field 22 of `/proc/PID/stat`: the start time in clock ticks.
pub(crate) fn start_time_of(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_time(&stat)
}

/// The start time in a `/proc/PID/stat` line; the name in parentheses may
/// hold spaces and parentheses, so fields count from the last `)`.
pub(crate) fn parse_start_time(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Fields after the name start at 3 (state); the start time is 22.
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// Whether `/proc/PID/maps` shows a mapping of inode `inode`.
fn maps_inode(pid: u32, inode: u64) -> bool {
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { return false };
    maps.lines().any(|line| line.split_whitespace().nth(4).and_then(|i| i.parse::<u64>().ok()) == Some(inode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_field_22_even_with_a_name_full_of_parentheses() {
        let stat = "1234 (a (b) c) S 1 1234 1234 0 -1 4194304 100 0 0 0 5 6 0 0 20 0 1 0 987654 1000 100";
        assert_eq!(parse_start_time(stat), Some(987654));
        assert_eq!(parse_start_time("garbage"), None);
    }

    #[test]
    fn our_own_start_time_reads_back() {
        assert!(start_time_of(std::process::id()).is_some());
    }
}

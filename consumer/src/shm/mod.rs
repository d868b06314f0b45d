//! The recorder's side of the shared-memory transport: producers on a
//! kernel without user_events, found in `/dev/shm/usertrace-UID`, their
//! tracepoints attached by writing their enable words, their rings read
//! into the same rounds as the perf rings.
//!
//! Each event read from a ring becomes the perf SAMPLE the kernel would
//! have written for a user_events hit (same sample layout, `trace_entry`
//! and payload), under a tracepoint id and perf id of our own, and each
//! rise in a ring's loss count becomes a LOST record. From there on the
//! session cannot tell the transports apart: the same orderer puts these
//! samples in one time order with the kernel's sideband (both clocks are
//! CLOCK_MONOTONIC: a ring stamped with the raw TSC is converted, `clock.rs`), the same thread table names them, and the archive
//! writes them with a format text that perf reads.
//!
//! The layout and the protocol are `usertrace::shm_layout`'s. Everything a
//! producer wrote is checked before use, and what one read copies is
//! bounded by its ring's size: a producer can make us neither block nor
//! allocate without bound.
//!
//! A producer whose ring passes a quarter full wakes the drain through a
//! datagram socket of ours (`wake.rs`), so that a burst into an idle
//! recorder is read before it fills the ring.

mod clock;
mod containers;
mod handoff;
mod list;
mod place;
mod producer;
mod ring;
mod wake;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use usertrace::shm_layout::{in_another_pid_namespace, parse_registry_file_name, parse_ring_file_name, records, DIRECTORY_PREFIX};
use usertrace::Pattern;

use crate::containers::{selected, ContainerIdentity, ContainerSelector};
use crate::format::EventFormat;
use crate::archive::write_sample;
use crate::processes::ProcessInfo;
use crate::record::PERF_RECORD_LOST;
use crate::sys;
use place::Place;
pub use list::{shared_tracepoints, SharedListing, SharedTracepoint};
use producer::{KnownSlot, Producer, Refusal};
use clock::TscClock;
use ring::ShmRing;
use wake::WakeSocket;

/// The system the events show under, as user_events would name it.
const SYSTEM: &str = "user_events";
/// Tracepoint ids of our own count down from here: far above what any
/// kernel hands out, below the archive's own tracepoints (a flight
/// recorder's dump holds `usertrace:dump` beside these).
const FIRST_ID: u16 = crate::archive::LOWEST_OWN_TRACEPOINT_ID - 1;
/// Perf ids of our own count down from here, below the archive's own.
const FIRST_PERF_ID: u64 = u64::MAX - 16;

/// A format the session attached through shared memory.
#[derive(Clone)]
pub(crate) struct Attached {
    pub(crate) format: Arc<EventFormat>,
    pub(crate) perf_id: u64,
}

/// What [`ShmSource::attach_new`] found that the session must know of.
pub(crate) struct NewFormat {
    pub(crate) format: Arc<EventFormat>,
    pub(crate) perf_id: u64,
    /// The format file's text, for the archive.
    pub(crate) text: String,
}

/// A producer with tracepoints the session asked for that it cannot record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRecorded {
    /// When it was found so.
    pub time_ns: u64,
    /// The process (its host pid); 0 where a refused file is all we know.
    pub pid: u32,
    /// Its name (`/proc/PID/comm`), if it could be read.
    pub comm: String,
    /// Why, for a person: "recorded by another usertrace (pid 12)".
    pub reason: String,
    /// The file refused, when a file is why (a symlink, a registry that
    /// lies): as the recorder reached it, e.g. through `/proc/PID/root`.
    pub file: Option<PathBuf>,
}

/// Something read from the rings, in ring order.
pub(crate) enum Item<'a> {
    /// A perf record (SAMPLE or LOST) built from a ring's bytes, with the
    /// description of its process read when we took it, for the session
    /// to use in place of a /proc that may be gone by now.
    Record(&'a [u8], Option<&'a ProcessInfo>),
    /// The end of one ring's records, thread `tid`'s; they were written
    /// on `cpu` last.
    EndOfRing { cpu: u32, tid: u32 },
}

/// Every producer the recorder holds, and the formats it made for them.
pub(crate) struct ShmSource {
    recorder: u32,
    /// The session's patterns: which tracepoints to attach.
    patterns: Vec<Pattern>,
    /// Directories to look in: ours, or every user's when we are root,
    /// in the host's /dev/shm and in every container's.
    all_users: bool,
    /// The containers a root recorder serves: every one when empty.
    selectors: Vec<ContainerSelector>,
    /// Every container's /dev/shm, found through /proc.
    containers: containers::Containers,
    producers: Vec<Producer>,
    /// Registries looked at and not taken, by path, with why; not retried.
    refused: HashMap<PathBuf, String>,
    /// Registries another live recorder holds, by path, with its pid:
    /// looked at again once that recorder is gone.
    held_elsewhere: HashMap<PathBuf, u32>,
    /// Registries a producer was still writing at the last scan: looked at
    /// again by the next scan, not by every read.
    unfinished: HashSet<PathBuf>,
    /// A container's registries whose process no walk of /proc has shown
    /// yet (one starting, or one gone), with the members of that walk:
    /// opened again only once a newer walk is published, not at every scan.
    awaiting_walk: HashMap<PathBuf, Arc<[u32]>>,
    /// Producers found unrecordable since the session last took them.
    pub(crate) not_recorded: Vec<NotRecorded>,
    /// Formats by descriptor: the same tracepoint in two processes is one
    /// format, as one user_events event would be.
    formats: HashMap<String, Attached>,
    next_id: u16,
    next_perf_id: u64,
    /// Malformed records and rings seen.
    pub(crate) malformed: u64,
    /// When the session began, CLOCK_MONOTONIC.
    started_ns: u64,
    /// The inode of this recorder's PID namespace, 0 if unknown: a
    /// producer's pid names it only in its own.
    pid_namespace: u64,
    scratch: Vec<u8>,
    record: Vec<u8>,
    /// Where producers wake us: bound when the first producer is taken
    /// (a `list` binds nothing), None if that failed.
    wake: Option<WakeSocket>,
    wake_tried: bool,
    /// When a wakeup was last honoured.
    last_wake: Option<std::time::Instant>,
    /// Converts the times of rings stamped with the TSC.
    clock: TscClock,
}

impl ShmSource {
    pub(crate) fn new(patterns: Vec<Pattern>, selectors: Vec<ContainerSelector>) -> ShmSource {
        ShmSource {
            recorder: std::process::id(),
            patterns,
            all_users: sys::effective_uid() == 0,
            selectors,
            containers: containers::Containers::default(),
            producers: Vec::new(),
            refused: HashMap::new(),
            held_elsewhere: HashMap::new(),
            unfinished: HashSet::new(),
            awaiting_walk: HashMap::new(),
            not_recorded: Vec::new(),
            formats: HashMap::new(),
            next_id: FIRST_ID,
            next_perf_id: FIRST_PERF_ID,
            malformed: 0,
            started_ns: sys::monotonic_ns(),
            pid_namespace: usertrace::shm_layout::own_pid_namespace(),
            scratch: Vec::new(),
            record: Vec::new(),
            wake: None,
            wake_tried: false,
            last_wake: None,
            clock: TscClock::new(),
        }
    }

    /// The wake socket to poll, unless a wakeup was honoured less than
    /// `MIN_WAKE_INTERVAL_MS` ago (then None, and the caller waits no
    /// longer than that interval): a producer that sends without end
    /// wakes us no more often than that.
    pub(crate) fn wake_fd_if_due(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        let interval = std::time::Duration::from_millis(usertrace::shm_layout::MIN_WAKE_INTERVAL_MS);
        let due = self.last_wake.is_none_or(|at| at.elapsed() >= interval);
        self.wake.as_ref().filter(|_| due).map(WakeSocket::as_fd)
    }

    /// Whether there is a wake socket at all.
    pub(crate) fn has_wake_socket(&self) -> bool {
        self.wake.is_some()
    }

    /// Empties the wake socket after a poll that watched it; true if a
    /// producer had sent anything (a wakeup, now honoured).
    pub(crate) fn take_wakeups(&mut self) -> bool {
        let woken = self.wake.as_ref().is_some_and(|w| w.take() > 0);
        if woken {
            self.last_wake = Some(std::time::Instant::now());
        }
        woken
    }

    /// Makes the wake socket (at the first producer taken) reachable from
    /// the directory of producer `index`, which we now hold.
    fn reachable_from(&mut self, index: usize) {
        if !self.wake_tried {
            self.wake_tried = true;
            self.wake = WakeSocket::bind(self.recorder);
        }
        // Not into a container's directory: a link is made by path, and
        // a path into a container is what we never follow. Its producers
        // are read at the poll interval.
        let producer = &self.producers[index];
        if let (Some(wake), Some(dir), false) = (self.wake.as_mut(), producer.path.parent(), producer.place.in_container) {
            wake.reach_from(dir);
        }
    }

    /// Hands a descriptor of `data`, the node's `user_events_data`, to
    /// every producer in a selected container that waits for one
    /// (`handoff.rs`), from the walks of /proc.
    pub(crate) fn hand_off_from(&mut self, data: PathBuf) {
        self.containers.handoff = Some(data);
    }

    /// Every format attached so far.
    pub(crate) fn formats(&self) -> impl Iterator<Item = &Arc<EventFormat>> {
        self.formats.values().map(|a| &a.format)
    }

    /// The directories to look in, open, each with the host pids of the
    /// processes that share it (a container's; none for the host's).
    fn places(&mut self) -> Vec<(Arc<Place>, Arc<[u32]>)> {
        let host: Vec<PathBuf> = if self.all_users {
            let (parent, prefix) = DIRECTORY_PREFIX.rsplit_once('/').expect("an absolute prefix");
            let Ok(entries) = std::fs::read_dir(parent) else { return Vec::new() };
            entries.flatten().filter(|e| e.file_name().to_string_lossy().starts_with(prefix)).map(|e| e.path()).collect()
        } else {
            vec![usertrace::shm_layout::directory(sys::effective_uid())]
        };
        let none: Arc<[u32]> = Arc::new([]);
        let mut places: Vec<_> = host.iter().filter_map(|dir| Place::open_host(dir).ok()).map(|p| (Arc::new(p), none.clone())).collect();
        // Other containers' are read by a recorder that may read every
        // process's: root, as `perf record -a`.
        if self.all_users {
            let found = self.containers.scan(containers::host_shm(), &self.selectors);
            places.extend(found.into_iter().map(|f| (f.place, f.members)));
        }
        places
    }

    /// Whether the registry of (in-place) pid `pid` in `place` may be read
    /// at all: with selectors, only if a selected process could have made
    /// it. One outside them is never opened. None: cannot tell yet (its
    /// process is not among those the last walk of /proc found).
    fn may_read(&self, place: &Place, members: &[u32], pid: u32) -> Option<bool> {
        if self.selectors.is_empty() {
            return Some(true);
        }
        if place.in_container {
            containers::any_selected(members, pid, &self.selectors)
        } else {
            Some(ContainerIdentity::read(pid).is_some_and(|who| selected(&self.selectors, &who)))
        }
    }

    /// Tells the session of a file refused, once.
    fn refuse_file(&mut self, path: PathBuf, reason: String) {
        if self.refused.insert(path.clone(), reason.clone()).is_none() {
            self.not_recorded.push(NotRecorded { time_ns: sys::monotonic_ns(), pid: 0, comm: String::new(), reason, file: Some(path) });
        }
    }

    /// Takes registries that appeared, drops producers that are gone, and
    /// attaches every live slot that matches `patterns`; returns the formats
    /// made for the first time.
    pub(crate) fn attach_new(&mut self) -> Vec<NewFormat> {
        self.unfinished.clear();
        for (place, members) in self.places() {
            self.take_registries(&place, &members);
        }
        self.attach_taken()
    }

    /// Takes the registries in `place` not seen yet; `members` are the
    /// host pids of its container's processes (none for the host's).
    fn take_registries(&mut self, place: &Arc<Place>, members: &Arc<[u32]>) {
        for name in place.names() {
            let path = place.path(&name);
            let Some((pid, _)) = parse_registry_file_name(&name) else { continue };
            if self.producers.iter().any(|p| p.path == path) || self.refused.contains_key(&path) {
                continue;
            }
            if self.awaiting_walk.get(&path).is_some_and(|seen| Arc::ptr_eq(seen, members)) {
                self.unfinished.insert(path);
                continue;
            }
            match self.may_read(place, members, pid) {
                Some(true) => {}
                // Remembered, so that neither a rescan nor a read asks again.
                Some(false) => {
                    self.refused.insert(path, "outside the selected containers".into());
                    continue;
                }
                None => {
                    self.unfinished.insert(path);
                    continue;
                }
            }
            // Taken again once the recorder that held it is gone.
            match self.held_elsewhere.get(&path) {
                Some(&holder) if sys::process_exists(holder) => continue,
                Some(_) => {
                    self.held_elsewhere.remove(&path);
                }
                None => {}
            }
            match Producer::open(place, &name, members) {
                // Its host pid now known: its own container must be selected.
                Ok(producer) if !self.selectors.is_empty() && !ContainerIdentity::read(producer.host_pid).is_some_and(|w| selected(&self.selectors, &w)) => {
                    // Not looked at again: it stays outside.
                    self.refused.insert(path, "outside the selected containers".into());
                }
                Ok(producer) => {
                    self.awaiting_walk.remove(&path);
                    self.producers.push(producer);
                }
                Err(Refusal::Unfinished) => {
                    if place.in_container {
                        self.awaiting_walk.insert(path.clone(), members.clone());
                    }
                    self.unfinished.insert(path);
                }
                Err(Refusal::Held { recorder }) => {
                    self.held_elsewhere.insert(path, recorder);
                }
                Err(Refusal::Malformed(why)) => self.refuse_file(path, format!("not a registry the recorder reads: {why}")),
            }
        }
    }

    /// Attaches the slots of the producers just taken; marks the others'
    /// as due for `read`.
    fn attach_taken(&mut self) -> Vec<NewFormat> {
        // A new producer's slots are read at once: its rings may already
        // hold records (a fork child that wrote before we looked). A known
        // one's are read after its rings, in `read`: records written before
        // a slot changed are then decoded by what the slot was.
        let mut new = Vec::new();
        let mut index = 0;
        while index < self.producers.len() {
            if self.producers[index].generation_read() {
                self.producers[index].slots_due = true;
            } else if let Err(holder) = self.attach_slots(index, &mut new) {
                self.held_by(index, holder);
                continue;
            }
            index += 1;
        }
        new
    }

    /// Whether every ring of producer `index` has been read to its end.
    fn drained(&self, index: usize) -> bool {
        self.producers[index].rings.iter().all(ShmRing::is_empty)
    }

    /// Lets go of producer `index`, which recorder `holder` holds, and says
    /// so once; it is looked at again when that recorder is gone.
    fn held_by(&mut self, index: usize, holder: u32) {
        let gone = self.producers.swap_remove(index);
        self.not_recorded(gone.host_pid, format!("recorded by another usertrace (pid {holder})"));
        self.held_elsewhere.insert(gone.path, holder);
    }

    /// Tells the session of a producer it cannot record.
    fn not_recorded(&mut self, pid: u32, reason: String) {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).map(|c| c.trim_end().to_owned()).unwrap_or_default();
        self.not_recorded.push(NotRecorded { time_ns: sys::monotonic_ns(), pid, comm, reason, file: None });
    }

    /// Attaches the changed slots of producer `index` that match; takes
    /// the producer at its first match. Err: the pid of another recorder,
    /// which holds it.
    fn attach_slots(&mut self, index: usize, new: &mut Vec<NewFormat>) -> Result<(), u32> {
        self.producers[index].slots_due = false;
        let changed = self.producers[index].changed_slots();
        for (slot_index, slot) in changed {
            let Ok(slot) = slot else {
                self.malformed += 1;
                continue;
            };
            let Ok((name, fields)) = usertrace::descriptor::parse_descriptor(&slot.descriptor) else {
                self.malformed += 1;
                continue;
            };
            let matches = self.patterns.iter().any(|p| p.matches(SYSTEM, &name));
            let theirs = self.producers[index].pid_namespace;
            // In a container's own /dev/shm its pid was translated; in
            // ours (a container that shares it) it cannot be.
            let untranslated = !self.producers[index].place.in_container;
            if matches && untranslated && in_another_pid_namespace(theirs, self.pid_namespace) {
                // Its pid is its own namespace's: here it names another
                // process, or none, which is neither written nor asked its
                // name. It stays off.
                let (pid, path) = (self.producers[index].pid, self.producers[index].path.clone());
                let reason = format!(
                    "it runs in another PID namespace (pid:[{theirs}]), where its pid is {pid}, and a recorder can find its process \
                     only by that pid in its own namespace: record from inside that namespace (`nsenter --target HOST_PID --pid --mount`), \
                     or run the producer in this one"
                );
                if self.refused.insert(path, reason.clone()).is_none() {
                    self.not_recorded.push(NotRecorded { time_ns: sys::monotonic_ns(), pid, comm: String::new(), reason, file: None });
                }
                return Ok(());
            }
            if matches && !self.producers[index].held {
                if let Err(Refusal::Held { recorder }) = self.producers[index].claim(self.recorder) {
                    return Err(recorder);
                }
                // Before its enable words are written: then it is still
                // there to read, however soon after its events it exits.
                self.producers[index].describe();
                self.reachable_from(index);
            }
            let producer = &self.producers[index];
            if !matches {
                // A recorder that died may have left it on: off, so the
                // producer does not fill a ring that nobody reads. (Only
                // in a producer we hold: another recorder's are its own.)
                if producer.held && sys::read_process_word(producer.host_pid, slot.enable_address).is_ok_and(|w| w & 1 != 0) {
                    let _ = producer.write_enable(slot_index, slot.enable_address, 0);
                }
                self.producers[index].slots[slot_index] = Some(KnownSlot { slot, attached: None, enabled: false });
                continue;
            }
            // Without ptrace rights over it the kernel refuses the writes:
            // the rule `perf record -p` follows. Its events are not ours.
            // (One that has exited is read, never written: the files'
            // owner-only mode is then the rule.)
            let alive = producer.is_alive();
            if let Err(errno) = if alive { producer.check_rights(slot.enable_address) } else { Ok(()) } {
                let (pid, path) = (producer.host_pid, producer.path.clone());
                if self.refused.insert(path, format!("its memory is not ours to write ({errno})")).is_none() {
                    self.not_recorded(
                        pid,
                        format!(
                            "the kernel does not let this recorder write its enable words ({errno}): that needs ptrace rights over it, \
                             as `perf record -p` does (the same user and, where kernel.yama.ptrace_scope is 1, its parent, or root)"
                        ),
                    );
                }
                continue;
            }
            let attached = match self.formats.get(&slot.descriptor) {
                Some(a) => a.clone(),
                None => {
                    let id = self.next_id;
                    let text = usertrace::descriptor::tracefs_format(SYSTEM, &name, id, &fields);
                    let Ok(format) = EventFormat::parse(SYSTEM, &text) else {
                        self.malformed += 1;
                        continue;
                    };
                    self.next_id -= 1;
                    let attached = Attached { format: Arc::new(format), perf_id: self.next_perf_id };
                    self.next_perf_id -= 1;
                    self.formats.insert(slot.descriptor.clone(), attached.clone());
                    new.push(NewFormat { format: attached.format.clone(), perf_id: attached.perf_id, text });
                    attached
                }
            };
            // A process that has exited is only read (a fork child that
            // wrote and left before we looked).
            let enabled = alive && producer.write_enable(slot_index, slot.enable_address, 1).is_ok();
            self.producers[index].slots[slot_index] = Some(KnownSlot { slot, attached: Some(attached), enabled });
        }
        Ok(())
    }

    /// Reads every held producer's rings, in turn, into perf records; then
    /// applies the slot changes a rescan found, and lets go of producers
    /// that are gone and read to the end. Returns the formats made anew.
    pub(crate) fn read(&mut self, mut each: impl FnMut(Item<'_>)) -> Vec<NewFormat> {
        // A registry that appeared since the last look is taken now, not at
        // the next rescan: a fork child that wrote and exited in between
        // has its EXIT in the perf rings just read, and its events must
        // reach the same round to be ordered before it.
        // Only the directories that showed one are looked in: a full scan
        // (every user's, every container's) is the rescan's, not every read's.
        let unknown = self.map_new_rings();
        let mut new = Vec::new();
        if !unknown.is_empty() {
            for place in unknown {
                // A container's new process is not among the members the
                // last walk found: it is taken at the next rescan.
                self.take_registries(&place, &Arc::from([]));
            }
            new = self.attach_taken();
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut record = std::mem::take(&mut self.record);
        // Before the rings are read: every TSC stamp in them is older.
        if self.producers.iter().any(|p| p.held && p.rings.iter().any(|r| r.tsc)) {
            self.clock.refresh();
        }
        for producer in self.producers.iter_mut().filter(|p| p.held) {
            let pid = producer.host_pid;
            let mut finished = Vec::new();
            for (ring_index, ring) in producer.rings.iter_mut().enumerate() {
                // Closed is read before the records: whatever the thread wrote
                // before closing is then among them.
                let closed = ring.closed();
                if ring.take(&mut scratch).is_err() {
                    self.malformed += 1;
                }
                for item in records(&scratch) {
                    let Ok((header, payload)) = item else {
                        self.malformed += 1;
                        break;
                    };
                    let Some(attached) = producer.slots.get(header.slot as usize).and_then(|s| s.as_ref()).and_then(|s| s.attached.as_ref()) else {
                        // A slot we did not attach (or no longer know).
                        continue;
                    };
                    let time_ns = if ring.tsc { self.clock.to_ns(header.time_ns) } else { header.time_ns };
                    // Written for an earlier recording (a stale file, a ring
                    // a recorder that died left full): not part of this one.
                    if time_ns < self.started_ns {
                        continue;
                    }
                    ring.last_cpu = header.cpu;
                    sample(&mut record, attached, pid, ring.host_tid, time_ns, header.cpu, payload);
                    each(Item::Record(&record, producer.description.as_deref()));
                }
                let lost = ring.new_losses();
                if lost > 0 {
                    let perf_id = self.formats.values().next().map_or(FIRST_PERF_ID, |a| a.perf_id);
                    lost_record(&mut record, perf_id, pid, ring.host_tid, sys::monotonic_ns(), ring.last_cpu, lost);
                    each(Item::Record(&record, producer.description.as_deref()));
                }
                each(Item::EndOfRing { cpu: ring.last_cpu, tid: ring.host_tid });
                if closed {
                    finished.push(ring_index);
                }
            }
            for ring_index in finished.into_iter().rev() {
                // The thread is gone and its ring read to the end.
                producer.rings.swap_remove(ring_index).remove_file();
            }
        }
        self.scratch = scratch;
        self.record = record;
        let mut index = 0;
        while index < self.producers.len() {
            let producer = &self.producers[index];
            if !producer.slots_due {
                index += 1;
                continue;
            }
            // One from another PID namespace is not judged by its pid here,
            // unless it was translated (a container's own /dev/shm).
            let judged = producer.place.in_container || !in_another_pid_namespace(producer.pid_namespace, self.pid_namespace);
            if judged && !producer.is_alive() {
                // Its threads may have made rings after this round listed
                // the directory; now that it is gone the listing is final.
                // Only once that finds nothing new, and everything it wrote
                // has been read, are its files litter.
                let found = if producer.held { Self::map_rings_of(&mut self.producers[index]) } else { 0 };
                if found == 0 && self.drained(index) {
                    let gone = self.producers.swap_remove(index);
                    // Another recorder that holds it may not have read it
                    // yet: then its files are that recorder's to remove,
                    // and not ours to open again until it is gone.
                    match gone.recorder().filter(|&r| !gone.held && sys::process_exists(r)) {
                        Some(holder) => {
                            self.held_elsewhere.insert(gone.path.clone(), holder);
                        }
                        None => gone.remove_files(),
                    }
                    continue;
                }
            }
            if let Err(holder) = self.attach_slots(index, &mut new) {
                self.held_by(index, holder);
                continue;
            }
            index += 1;
        }
        new
    }

    /// Maps the rings of held producers that appeared since the last read;
    /// returns the directories whose listing showed a registry not taken yet.
    fn map_new_rings(&mut self) -> Vec<Arc<Place>> {
        let mut unknown = Vec::new();
        if self.producers.is_empty() {
            return unknown;
        }
        let mut places: Vec<Arc<Place>> = Vec::new();
        for producer in self.producers.iter().filter(|p| p.held) {
            if !places.iter().any(|p| Arc::ptr_eq(p, &producer.place)) {
                places.push(producer.place.clone());
            }
        }
        for place in places {
            for name in place.names() {
                if parse_registry_file_name(&name).is_some() {
                    let path = place.path(&name);
                    let new = !self.producers.iter().any(|p| p.path == path)
                        && !self.refused.contains_key(&path)
                        && !self.held_elsewhere.contains_key(&path)
                        && !self.unfinished.contains(&path);
                    if new && !unknown.iter().any(|p| Arc::ptr_eq(p, &place)) {
                        unknown.push(place.clone());
                    }
                    continue;
                }
                let Some((pid, instance, _tid)) = parse_ring_file_name(&name) else { continue };
                let Some(producer) =
                    self.producers.iter_mut().find(|p| p.held && p.pid == pid && p.instance == instance && Arc::ptr_eq(&p.place, &place))
                else {
                    continue;
                };
                if let Err(why) = map_ring(producer, &name) {
                    self.refuse_file(place.path(&name), why);
                }
            }
        }
        unknown
    }

    /// Maps the rings of one producer that appeared since the last read;
    /// returns how many. (A ring refused here was refused, and said so,
    /// by `map_new_rings` while the producer lived.)
    fn map_rings_of(producer: &mut Producer) -> usize {
        let mut found = 0;
        for name in producer.place.clone().names() {
            let Some((pid, instance, _tid)) = parse_ring_file_name(&name) else { continue };
            if pid == producer.pid && instance == producer.instance && map_ring(producer, &name) == Ok(true) {
                found += 1;
            }
        }
        found
    }

    /// Turns off every tracepoint it turned on, before the last read: what
    /// was written until then is read, and nothing is written after it
    /// into a ring this recorder will not read again (which the next
    /// recorder would find).
    pub(crate) fn disable_all(&mut self) {
        for producer in &mut self.producers {
            for index in 0..producer.slots.len() {
                if let Some(known) = producer.slots[index].as_ref().filter(|k| k.enabled) {
                    let _ = producer.write_enable(index, known.slot.enable_address, 0);
                    if let Some(known) = producer.slots[index].as_mut() {
                        known.enabled = false;
                    }
                }
            }
        }
    }

    /// Ends the recording: clears every enable word still set and gives
    /// every registry back, so producers stop writing rings nobody reads
    /// and another recorder may take them.
    pub(crate) fn finish(&mut self) {
        self.disable_all();
        for producer in &self.producers {
            producer.release(self.recorder);
        }
        self.producers.clear();
    }
}

impl Drop for ShmSource {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The most rings mapped for one producer: one a thread, far beyond what
/// a program runs, and a bound on what a producer that makes files
/// without end can have us map (each up to `MAX_RING_DATA_LEN`).
const MAX_RINGS_PER_PRODUCER: usize = 4096;

/// Maps the ring `name` of `producer`'s place unless it is mapped already;
/// whether it was mapped now. Err: why it is refused for good (a symlink,
/// not a regular file, one ring too many).
fn map_ring(producer: &mut Producer, name: &str) -> Result<bool, String> {
    let path = producer.place.path(name);
    if producer.rings.iter().any(|r| r.path == path) {
        return Ok(false);
    }
    if producer.rings.len() >= MAX_RINGS_PER_PRODUCER {
        return Err(format!("its process already has {MAX_RINGS_PER_PRODUCER} rings mapped, the most the recorder maps for one"));
    }
    let file = match producer.place.open_file(name) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(place::refusal(&e)),
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err("it is not a regular file (a producer's ring is one)".into());
    }
    let host_pid = producer.host_pid;
    let in_container = producer.place.in_container;
    // A thread that has exited has no host tid left to find: its events
    // go under its process's pid, never under a number of another
    // namespace's.
    let host_tid = |tid| if in_container { containers::host_tid(host_pid, tid).unwrap_or(host_pid) } else { tid };
    // One that does not check out may be half made (its length is written
    // last): looked at again next time, not counted.
    match ShmRing::map(&file, &producer.place, name, producer.pid, host_tid) {
        Ok(ring) => {
            producer.rings.push(ring);
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}

/// The SAMPLE the kernel would have written for this event into `out`.
fn sample(out: &mut Vec<u8>, attached: &Attached, pid: u32, tid: u32, time_ns: u64, cpu: u32, payload: &[u8]) {
    // trace_entry: common_type, flags, preempt count, common_pid (the tid).
    let mut entry = [0u8; usertrace::wire::TRACE_ENTRY_LEN];
    entry[0..2].copy_from_slice(&(attached.format.id as u16).to_ne_bytes());
    entry[4..8].copy_from_slice(&(tid as i32).to_ne_bytes());
    write_sample(out, attached.perf_id, (pid, tid), time_ns, cpu, &[&entry, payload]);
}

/// A LOST record of `lost` events, with the sample_id trailer the kernel
/// appends (pid, tid, time, cpu, res, id).
fn lost_record(out: &mut Vec<u8>, perf_id: u64, pid: u32, tid: u32, time_ns: u64, cpu: u32, lost: u64) {
    let size = crate::record::HEADER_LEN + 16 + 32;
    out.clear();
    out.extend_from_slice(&PERF_RECORD_LOST.to_ne_bytes());
    out.extend_from_slice(&0u16.to_ne_bytes());
    out.extend_from_slice(&(size as u16).to_ne_bytes());
    out.extend_from_slice(&perf_id.to_ne_bytes());
    out.extend_from_slice(&lost.to_ne_bytes());
    out.extend_from_slice(&pid.to_ne_bytes());
    out.extend_from_slice(&tid.to_ne_bytes());
    out.extend_from_slice(&time_ns.to_ne_bytes());
    out.extend_from_slice(&cpu.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&perf_id.to_ne_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{parse, Record};

    #[test]
    fn an_event_becomes_the_sample_the_kernel_would_have_written() {
        let text = usertrace::descriptor::tracefs_format(SYSTEM, "ev", 65000, &[usertrace::Field::new("a", usertrace::FieldType::U32)]);
        let format = Arc::new(EventFormat::parse(SYSTEM, &text).expect("our own format text parses"));
        let attached = Attached { format: format.clone(), perf_id: 77 };
        let mut out = Vec::new();
        sample(&mut out, &attached, 10, 11, 12345, 1, &7u32.to_ne_bytes());
        let Ok(Record::Sample { sample, raw, .. }) = parse(&out) else { panic!("not a sample: {out:?}") };
        assert_eq!((sample.id, sample.pid, sample.tid, sample.time, sample.cpu), (77, 10, 11, 12345, 1));
        let fields = crate::decode(&format, raw).expect("decodes");
        assert_eq!(fields, vec![("a", crate::FieldValue::Unsigned(7))]);
    }

    #[test]
    fn a_loss_becomes_a_lost_record() {
        let mut out = Vec::new();
        lost_record(&mut out, 77, 10, 11, 12345, 1, 5);
        let Ok(Record::Lost { id, lost, sample }) = parse(&out) else { panic!("not a lost record") };
        assert_eq!((id, lost, sample.time, sample.cpu), (77, 5, 12345, 1));
    }
}

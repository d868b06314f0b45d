//! The drain thread: it owns the rings, reads them in rounds, and hands each
//! round's records on, copied as the kernel wrote them, to the session's
//! thread, which parses, orders, names and decodes them. It also attaches
//! tracepoints as they appear (the rings are its), and writes the archive,
//! straight from each perf ring before the ring is freed (no copy: see
//! `archive/writer.rs`).
//!
//! Per record it only copies, and looks at a few fixed bytes: the header's
//! type, and the pid of a sample, an exec's COMM or an EXIT. Those say when
//! a process must be described (its executable and command line read from
//! `/proc`): at its first event, and at each exec. Both are read here, as
//! the ring is drained, while a short-lived process still exists, and go
//! into the archive just before the record that called for them.
//!
//! The queue to the session's thread is bounded by bytes. A round that
//! would pass the bound is dropped, whole, and its events are counted as
//! the recorder's own loss ([`crate::Stats::dropped`]), apart from what the
//! rings lost: nothing is dropped silently.

use crate::bytes::{u16_at, u32_at, u64_at};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perf_event_open_sys::bindings::perf_event_attr;

use rustc_hash::{FxHashMap, FxHashSet};
use usertrace::Pattern;

use super::archive::{ArchiveWriter, EXIT_PROBE_NAME};
use super::flight::{DumpRequest, FlightDump, FlightEnd, FlightWindow};
use super::attach::{attach, open_filtered, Attachment, Window};
use super::error::Error;
use super::format::EventFormat;
use super::archive::process_sample;
use super::processes::ProcessInfo;
use super::record::{back_to_back, kind, HEADER_LEN, PERF_RECORD_COMM, PERF_RECORD_EXIT, PERF_RECORD_MISC_COMM_EXEC, PERF_RECORD_SAMPLE};
use super::ring::{RecordReader, Ring};
use super::sched_scope::{is_sched, SchedScope};
use super::stack_scope::StackScope;
use super::shm::{Item as ShmItem, ShmSource};
use super::select::{load_with_text, scan, systems_of};
use super::containers::ContainerSelector;
use super::sys;

/// The most bytes of rounds waiting for the session's thread: 64 MiB, a
/// few seconds of a flood, far more than a thread that keeps up ever
/// leaves. Past it, rounds are dropped and counted.
pub(crate) const MAX_QUEUED_BYTES: usize = 64 << 20;

/// The same for a flight recorder, whose window keeps every record
/// whether or not the session's thread (which only looks for triggers)
/// keeps up: small, as it is part of the recorder's fixed memory.
pub(crate) const FLIGHT_MAX_QUEUED_BYTES: usize = 2 << 20;

/// One CPU's two rings: task records, and tracepoint events.
pub(crate) struct CpuRing {
    pub cpu: u32,
    pub sideband: OwnedFd,
    pub sideband_ring: Ring,
    /// Owner of the ring the tracepoints of this CPU write into.
    pub events: OwnedFd,
    pub events_ring: Ring,
}

/// What one read of every ring gave, in the order it was read.
#[derive(Default)]
pub(crate) struct Round {
    /// The records, back to back, as the kernel wrote them.
    pub bytes: Vec<u8>,
    /// Which ring each stretch of `bytes` came from.
    pub segments: Vec<Segment>,
    /// Descriptions read for the record starting at each offset (a
    /// process's first sample, an exec's COMM), in offset order.
    pub described: Vec<(usize, ProcessInfo)>,
    /// Tracepoints attached before this round was read.
    pub attached: Vec<Attached>,
    /// Shared-memory producers found unrecordable before this round.
    pub not_recorded: Vec<super::shm::NotRecorded>,
    /// Rings whose published range made no sense (should stay 0).
    pub broken_rings: u64,
    /// Samples read and left out of `bytes`, counted only: a session whose
    /// events nobody takes (`Drain::count_samples`). Each run of samples of
    /// one perf id as (id, count): a ring holds long runs of one id, so
    /// this costs a comparison per sample, not a lookup.
    pub counted: Vec<(u64, u64)>,
}

/// A stretch of a round's bytes from one ring.
pub(crate) struct Segment {
    pub cpu: u32,
    pub sideband: bool,
    /// The producer thread whose shared-memory ring this stretch came
    /// from; `None` for a CPU's perf ring.
    pub thread: Option<u32>,
    /// Where the stretch ends in [`Round::bytes`].
    pub end: usize,
}

/// A tracepoint the drain thread attached.
pub(crate) struct Attached {
    pub format: Arc<EventFormat>,
    /// The perf ids of its events, one per CPU.
    pub ids: Vec<u64>,
    /// Whether its samples carry the emitting thread's user stack.
    pub stack: bool,
    pub window: Window,
    pub time_ns: u64,
}

/// What the session's thread shares with the drain thread.
#[derive(Default)]
pub(crate) struct Shared {
    /// Set to end the drain: it reads the rings a last time and stops.
    pub stop: AtomicBool,
    /// Woken with `stop` (an eventfd the drain also waits on), so that the
    /// drain ends at once rather than at the end of its wait; without one,
    /// at the end of the wait.
    pub stop_wake: Option<OwnedFd>,
    /// Bytes of rounds sent and not yet taken.
    pub queued_bytes: AtomicUsize,
    /// Events in rounds dropped because the queue was full.
    pub dropped: AtomicU64,
    /// A round's buffer the session's thread is done with, emptied, for
    /// the drain's next round: a fresh one would fault in each of its pages
    /// again, the larger part of the drain's own time in a flood. One is
    /// kept at the most, so this holds no more than one round's bytes.
    pub spare: Mutex<Option<Vec<u8>>>,
}

/// What the session's thread may tell the drain thread after it started.
pub(crate) enum Control {
    /// Attach at once to what a launched command's producers announce.
    AttachRequests(crate::AttachRequests),
    /// Close a flight recorder's window into a dump.
    Dump(DumpRequest),
    /// Record the scheduling of this process's threads (`--sched`).
    FollowScheduling(u32),
}

/// Where the drain thread writes every record besides the round: a
/// perf.data file as it goes, or a flight recorder's window.
pub(crate) enum Archive {
    // Boxed: both are large, and one of them lives in the drain.
    File(Box<ArchiveWriter>),
    Flight(Box<FlightWindow>),
}

impl Archive {
    fn describe_tracepoint(&mut self, ids: &[u64], attr: &perf_event_attr, format: &Arc<EventFormat>, text: &str) {
        match self {
            Archive::File(file) => file.describe_tracepoint(ids, attr, format, text),
            Archive::Flight(window) => window.descriptions().tracepoint(ids, attr, format, text),
        }
    }

    fn describe_carrier(&mut self, ids: &[u64], attr: &perf_event_attr, name: &'static str) {
        match self {
            Archive::File(file) => file.describe_carrier(ids, attr, name),
            Archive::Flight(window) => window.descriptions().carrier(ids, attr, name),
        }
    }

    /// Describes `pid` before the record at `at` of the perf ring being
    /// read, or (None) before the next record copied.
    fn process(&mut self, at: Option<usize>, pid: u32, time: u64, cpu: u32, info: &ProcessInfo) {
        match (self, at) {
            (Archive::File(file), Some(at)) => file.process_before(at, pid, time, cpu, info),
            (Archive::File(file), None) => file.process(pid, time, cpu, info),
            (Archive::Flight(window), _) => window.copy(&process_sample(pid, time, cpu, info)),
        }
    }

    /// Takes a record (`sample_time` for a sample): the file writes a perf
    /// ring's (`in_ring`) from the ring once it is read; the rest is copied.
    fn take(&mut self, bytes: &[u8], sample_time: Option<u64>, in_ring: bool) {
        match self {
            Archive::File(file) if in_ring => file.saw_sample(sample_time),
            Archive::File(file) => file.copy(bytes, sample_time),
            Archive::Flight(window) => window.copy(bytes),
        }
    }
}

/// The rings and what feeds them, owned by the drain thread.
pub(crate) struct Drain {
    tracefs: PathBuf,
    patterns: Vec<Pattern>,
    systems: Vec<String>,
    rings: Vec<CpuRing>,
    attachments: Vec<Attachment>,
    attached_tracepoints: FxHashSet<u64>,
    rescan: bool,
    rescan_interval: Duration,
    last_scan: Instant,
    attach_requests: Option<crate::AttachRequests>,
    archive: Option<Archive>,
    /// Where a flight recorder's dumps go, once closed.
    dumps: Option<Sender<FlightDump>>,
    /// Processes described since their first sample (until they exit).
    described: Described,
    /// Tracepoints attached since the last round was sent.
    attached: Vec<Attached>,
    /// With `--sched`: whose scheduling the scheduler tracepoints keep.
    sched: Option<SchedScope>,
    /// Producers on the shared-memory transport, read with the rings.
    shm: ShmSource,
    /// Whether the last read of the shared-memory rings found records: a
    /// producer wakes the drain only at its ring's watermark, so the drain
    /// then waits less.
    shm_busy: bool,
    /// Whether samples are only counted, not handed to the session's
    /// thread (`SessionOptions::yield_events` false): they still go into
    /// the archive and through the scheduler scope, and task records and
    /// losses are handed on as ever.
    count_samples: bool,
    /// Which of the tracepoints it attaches (the scheduler's aside) record
    /// the emitting thread's user stack (`SessionOptions::stacks`).
    stacks: StackScope,
}

/// What a drain is made of: the session's rings and archive, opened, and
/// what it is to attach.
pub(crate) struct DrainSetup {
    pub tracefs: PathBuf,
    pub patterns: Vec<Pattern>,
    pub rings: Vec<CpuRing>,
    pub archive: Option<Archive>,
    /// Where a flight recorder's dumps go, once closed.
    pub dumps: Option<Sender<FlightDump>>,
    /// `SessionOptions::wait_for_exact`: an exact name not registered yet
    /// is waited for, not refused.
    pub wait_for_exact: bool,
    pub rescan_interval: Duration,
    /// `SessionOptions::sched`.
    pub sched: bool,
    pub containers: Vec<ContainerSelector>,
    /// `SessionOptions::hand_off`.
    pub hand_off: bool,
    /// `SessionOptions::yield_events`.
    pub yield_events: bool,
    pub stacks: StackScope,
    /// The processes running when the session started, described then.
    pub running: FxHashMap<u32, ProcessInfo>,
}

impl Drain {
    /// A drain over `setup`, with every matching tracepoint registered
    /// now attached, on either transport. Err: an exact name that matches
    /// no tracepoint (unless it is waited for), or a failed attach.
    pub(crate) fn open(setup: DrainSetup) -> Result<Drain, Error> {
        let DrainSetup { tracefs, patterns, rings, archive, dumps, wait_for_exact, rescan_interval, sched, containers, hand_off, yield_events, stacks, running } =
            setup;
        let mut drain = Drain {
            tracefs,
            systems: systems_of(&patterns),
            shm: ShmSource::new(patterns.clone(), containers),
            rescan: patterns.iter().any(|p| p.is_glob()) || wait_for_exact,
            patterns,
            rings,
            attachments: Vec::new(),
            attached_tracepoints: FxHashSet::default(),
            rescan_interval,
            last_scan: Instant::now(),
            attach_requests: None,
            archive,
            dumps,
            described: Described::with_running(running),
            attached: Vec::new(),
            sched: sched.then(SchedScope::default),
            shm_busy: false,
            count_samples: !yield_events,
            stacks,
        };
        // Root, on a node with user_events: producers in containers that
        // have none may wait for ours.
        let data = drain.tracefs.join("user_events_data");
        if hand_off && sys::effective_uid() == 0 && data.exists() {
            drain.shm.hand_off_from(data);
        }
        drain.attach_new()?;
        if !wait_for_exact {
            drain.check_exact_names_attached()?;
        }
        Ok(drain)
    }

    /// Refuses an exact name (no wildcard) that no tracepoint attached
    /// matches, on either transport.
    fn check_exact_names_attached(&self) -> Result<(), Error> {
        for p in self.patterns.iter().filter(|p| !p.is_glob()) {
            let mut attached = self.attachments.iter().map(|a| &a.format).chain(self.shm.formats());
            if !attached.any(|f| p.matches(&f.system, &f.name)) {
                return Err(Error::UnknownEvent { name: p.as_str().to_owned() });
            }
        }
        Ok(())
    }

    /// The CPUs it has rings of.
    pub(crate) fn cpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.rings.iter().map(|r| r.cpu)
    }

    /// The tracepoints attached since this was last asked (or the last
    /// round was sent).
    pub(crate) fn take_attached(&mut self) -> Vec<Attached> {
        std::mem::take(&mut self.attached)
    }

    /// Attaches every matching tracepoint not attached yet.
    pub(crate) fn attach_new(&mut self) -> Result<(), Error> {
        self.last_scan = Instant::now();
        let systems: Vec<&str> = self.systems.iter().map(String::as_str).collect();
        for candidate in scan(&self.tracefs, &systems)? {
            if !self.patterns.iter().any(|p| p.matches(&candidate.system, &candidate.name)) {
                continue;
            }
            // The event may vanish between scan and read: skip it then.
            let (format, text) = match load_with_text(&candidate) {
                Ok((f, text)) => (Arc::new(f), text),
                Err(Error::Io { .. }) => continue,
                Err(e) => return Err(e),
            };
            if !self.attached_tracepoints.insert(format.id) {
                continue;
            }
            let owners: Vec<_> = self.rings.iter().map(|r| (r.cpu, r.events.as_fd())).collect();
            // The scheduler's tracepoints, scoped by `--sched`, are opened
            // without stacks; every other with them when asked.
            let stack = self.stacks.includes(&format) && !(self.sched.is_some() && is_sched(&format.system, &format.name));
            let opened = match self.sched.as_mut().filter(|_| is_sched(&format.system, &format.name)) {
                // Filtered from its first record: opened disabled with the
                // filter set, then enabled (no enable bit to race with).
                Some(scope) => scope.open(&format, &text, &owners),
                None => attach(format.clone(), &owners, stack),
            };
            let attachment = match opened {
                Ok(a) => a,
                // Deleted between scan and open.
                Err(Error::Perf { errno, .. }) if errno.0 == libc::ENOENT => continue,
                Err(e) => return Err(e),
            };
            let ids: Vec<u64> = attachment.events.iter().map(|(_, _, id)| *id).collect();
            if let Some(archive) = &mut self.archive {
                archive.describe_tracepoint(&ids, &sys::tracepoint_attr(format.id, stack), &format, &text);
            }
            self.attached.push(Attached { format, ids, stack, window: attachment.window, time_ns: sys::monotonic_ns() });
            self.attachments.push(attachment);
        }
        self.attach_shm();
        Ok(())
    }

    /// Takes shared-memory producers that appeared and attaches their
    /// matching tracepoints. Each new process is a new registry (unlike a
    /// user_events tracepoint, which covers every process once attached),
    /// so this runs at every rescan interval whatever the patterns.
    fn attach_shm(&mut self) {
        let new = self.shm.attach_new();
        self.take_shm_formats(new);
    }

    /// Describes formats made for shared-memory producers, and tells the
    /// session's thread of them.
    fn take_shm_formats(&mut self, formats: Vec<super::shm::NewFormat>) {
        for new in formats {
            if let Some(archive) = &mut self.archive {
                archive.describe_tracepoint(&[new.perf_id], &sys::tracepoint_attr(new.format.id, false), &new.format, &new.text);
            }
            // Its enable words were written before any event of it could be:
            // nothing written after they flipped can be missed.
            // Shared memory has no kernel to walk the stack: none.
            self.attached.push(Attached { format: new.format, ids: vec![new.perf_id], stack: false, window: Window::Held, time_ns: sys::monotonic_ns() });
        }
    }

    /// The drain thread's loop: a round per wakeup (data, an announced
    /// tracepoint, or the rescan interval), until told to stop; then a last
    /// round with the losses the end provokes, and the archive finished.
    pub(crate) fn run(mut self, shared: Arc<Shared>, rounds: Sender<Result<Round, Error>>, control: Receiver<Control>) -> Result<Option<FlightEnd>, Error> {
        loop {
            let stopping = shared.stop.load(Ordering::Acquire);
            while let Ok(message) = control.try_recv() {
                match message {
                    Control::AttachRequests(requests) => {
                        self.rescan = true;
                        self.attach_requests = Some(requests);
                    }
                    Control::Dump(request) => {
                        if let Some(Archive::Flight(window)) = &mut self.archive {
                            window.request(request);
                        }
                    }
                    Control::FollowScheduling(pid) => {
                        if let Some(scope) = &mut self.sched {
                            scope.follow(pid);
                        }
                    }
                }
            }
            if !stopping {
                if let Err(e) = self.wait_and_attach(shared.stop_wake.as_ref().map(AsFd::as_fd)) {
                    let _ = rounds.send(Err(e));
                }
            } else {
                // Producers that wrote and exited since the last look (fork
                // children) are read in this last round, and what the others
                // write stops before it.
                self.attach_shm();
                self.shm.disable_all();
            }
            // (A flight recorder's session gives none back: see Session.)
            let spare = shared.spare.lock().ok().and_then(|mut spare| spare.take());
            let mut round = Round { attached: std::mem::take(&mut self.attached), bytes: spare.unwrap_or_default(), ..Round::default() };
            self.described.next_round();
            if let Some(Archive::Flight(window)) = &mut self.archive {
                window.begin_round(sys::monotonic_ns());
            }
            self.read_rings(&mut round);
            if stopping {
                self.provoke_lost_records();
                self.read_rings(&mut round);
            }
            round.not_recorded = std::mem::take(&mut self.shm.not_recorded);
            self.refilter_sched();
            let written = match &mut self.archive {
                Some(Archive::File(archive)) if stopping => archive.finish(),
                Some(Archive::File(archive)) => archive.end_round(),
                // Closed by the session when it is done with the events
                // (`FlightEnd`), not here: the last round may hold triggers.
                Some(Archive::Flight(window)) => {
                    for dump in window.end_round(sys::monotonic_ns(), false) {
                        if let Some(dumps) = &self.dumps {
                            let _ = dumps.send(dump);
                        }
                    }
                    Ok(())
                }
                None => Ok(()),
            };
            self.send(round, &shared, &rounds);
            if let Err(e) = written {
                // Recording goes on for the other outputs; the archive,
                // which can no longer be complete, is given up.
                self.archive = None;
                let _ = rounds.send(Err(e));
            }
            if stopping {
                return Ok(self.flight_end());
            }
        }
    }

    /// A flight recorder's window and the writer's channel, handed back to
    /// the session when the drain stops; None for any other recording.
    fn flight_end(&mut self) -> Option<FlightEnd> {
        match (self.archive.take(), self.dumps.take()) {
            (Some(Archive::Flight(window)), Some(dumps)) => Some(FlightEnd::new(window, dumps)),
            _ => None,
        }
    }

    /// With `--sched`, once the followed threads changed: each scheduler
    /// tracepoint opened anew with the new filter, swapped in CPU by CPU
    /// (see `sched_scope.rs`), its new ids described and announced.
    fn refilter_sched(&mut self) {
        let Some(scope) = self.sched.as_mut() else { return };
        if !scope.take_changed() {
            return;
        }
        let owners: Vec<_> = self.rings.iter().map(|r| (r.cpu, r.events.as_fd())).collect();
        for a in self.attachments.iter_mut().filter(|a| is_sched(&a.format.system, &a.format.name)) {
            let Ok(filter) = std::ffi::CString::new(scope.filter_for(&a.format.name)) else { continue };
            // A kernel that refuses keeps the events there were.
            let Ok(fresh) = open_filtered(&a.format, &owners, &filter) else { continue };
            for ((_, old, _), (_, new, _)) in a.events.iter().zip(&fresh) {
                let _ = sys::disable(old.as_fd());
                let _ = sys::enable(new.as_fd());
            }
            let ids: Vec<u64> = fresh.iter().map(|(_, _, id)| *id).collect();
            scope.reopened(&ids);
            if let (Some(archive), Some(text)) = (&mut self.archive, scope.format_text(a.format.id)) {
                archive.describe_tracepoint(&ids, &sys::tracepoint_attr(a.format.id, false), &a.format, text);
            }
            self.attached.push(Attached { format: a.format.clone(), ids, stack: false, window: Window::Held, time_ns: sys::monotonic_ns() });
            a.events = fresh;
        }
    }

    /// Waits up to the rescan interval for data, and attaches tracepoints
    /// that appeared.
    fn wait_and_attach(&mut self, stop_wake: Option<BorrowedFd<'_>>) -> Result<(), Error> {
        let mut fds: Vec<BorrowedFd<'_>> = self.rings.iter().flat_map(|r| [r.sideband.as_fd(), r.events.as_fd()]).collect();
        fds.extend(self.attach_requests.as_ref().map(|r| r.as_fd()));
        fds.extend(stop_wake);
        // A producer whose ring passed its watermark wakes us; one that
        // woke us less than the minimum interval ago is heard again once
        // the interval is over, not before.
        let wake = self.shm.wake_fd_if_due();
        let wake_watched = wake.is_some();
        let wake_held_back = !wake_watched && self.shm.has_wake_socket();
        fds.extend(wake);
        // The stop flag is looked at between waits: a short one keeps the
        // end of a recording prompt. Without a wakeup (no socket, an older
        // producer, a wakeup lost), rings with data are read every
        // millisecond and others every 50.
        let wait = if self.shm_busy || wake_held_back {
            usertrace::shm_layout::MIN_WAKE_INTERVAL_MS as i32
        } else {
            self.rescan_interval.min(Duration::from_millis(50)).as_millis() as i32
        };
        sys::poll_readable(&fds, wait).map_err(|e| Error::Perf { op: "poll", cpu: 0, errno: e })?;
        drop(fds);
        if wake_watched {
            self.shm.take_wakeups();
        }
        let announced = self.attach_requests.as_ref().is_some_and(|r| r.drain() > 0);
        let due = self.last_scan.elapsed() >= self.rescan_interval;
        if announced || (self.rescan && due) {
            self.attach_new()?;
        } else if due {
            self.last_scan = Instant::now();
            self.attach_shm();
        }
        Ok(())
    }

    /// Hands `round` on, or drops it if the queue is full.
    fn send(&self, round: Round, shared: &Shared, rounds: &Sender<Result<Round, Error>>) {
        // What the queue holds is counted as allocated: a vector grown by
        // doubling may hold twice its bytes. Counted, not shrunk: a shrink
        // would copy every round of every recording, on the rings' path.
        let size = round.bytes.capacity();
        // ATOMICS: Relaxed; the count only bounds memory, it orders nothing.
        let cap = if matches!(self.archive, Some(Archive::Flight(_))) { FLIGHT_MAX_QUEUED_BYTES } else { MAX_QUEUED_BYTES };
        if size > 0 && shared.queued_bytes.load(Ordering::Relaxed) + size > cap {
            let events = samples_in(&round);
            shared.dropped.fetch_add(events, Ordering::Relaxed);
            // The attachments still count: later rounds hold their events.
            let _ = rounds.send(Ok(Round { attached: round.attached, not_recorded: round.not_recorded, ..Round::default() }));
            return;
        }
        shared.queued_bytes.fetch_add(size, Ordering::Relaxed);
        let _ = rounds.send(Ok(round));
    }

    /// The kernel reports a loss only in front of the next record written
    /// to the ring, so losses at the very end would go unreported. A thread
    /// that exits on each CPU makes the sideband event, and a probe opened
    /// into the event ring, write an EXIT record there, each preceded by any
    /// pending LOST. (The EXIT of our own short thread is harmless.)
    fn provoke_lost_records(&mut self) {
        let mut probe_ids = Vec::new();
        for r in &self.rings {
            let cpu = r.cpu;
            let probe = sys::open(&mut sys::exit_probe_attr(), cpu, Some(r.events.as_fd()));
            // Its FORK and EXIT records land in the archive too, and perf
            // refuses a file with a record of an event it does not know.
            probe_ids.extend(probe.as_ref().ok().and_then(|fd| sys::event_id(fd.as_fd()).ok()));
            let _ = std::thread::spawn(move || {
                let _ = sys::pin_current_thread(cpu);
            })
            .join();
            drop(probe);
        }
        if let Some(archive) = &mut self.archive {
            archive.describe_carrier(&probe_ids, &sys::exit_probe_attr(), EXIT_PROBE_NAME);
        }
    }

    /// Copies every ring's published records into `round`: the perf rings,
    /// then the shared-memory ones.
    fn read_rings(&mut self, round: &mut Round) {
        for r in &mut self.rings {
            let cpu = r.cpu;
            for sideband in [true, false] {
                let ring = if sideband { &mut r.sideband_ring } else { &mut r.events_ring };
                let (described, archive, sched, count_samples) = (&mut self.described, &mut self.archive, &mut self.sched, self.count_samples);
                let mut taker = RecordTaker { described, archive, sched, count_samples, round: &mut *round, cpu };
                let result = ring.read(&mut taker);
                if result.is_err() {
                    round.broken_rings += 1;
                }
                round.segments.push(Segment { cpu, sideband, thread: None, end: round.bytes.len() });
            }
        }
        let before = round.bytes.len();
        let malformed = self.shm.malformed;
        let (described, archive, sched, count_samples) = (&mut self.described, &mut self.archive, &mut self.sched, self.count_samples);
        let mut taker = RecordTaker { described, archive, sched, count_samples, round: &mut *round, cpu: 0 };
        let new = self.shm.read(|item| match item {
            ShmItem::Record(bytes, process) => {
                taker.cpu = sample_cpu(bytes).unwrap_or(0);
                taker.take(bytes, None, process)
            }
            ShmItem::EndOfRing { cpu, tid } => {
                let end = taker.round.bytes.len();
                taker.round.segments.push(Segment { cpu, sideband: false, thread: Some(tid), end });
            }
        });
        round.broken_rings += self.shm.malformed - malformed;
        self.shm_busy = round.bytes.len() > before;
        self.take_shm_formats(new);
    }
}

/// What happens to each record read, whichever ring it came from.
struct RecordTaker<'a> {
    described: &'a mut Described,
    archive: &'a mut Option<Archive>,
    sched: &'a mut Option<SchedScope>,
    count_samples: bool,
    round: &'a mut Round,
    /// The CPU of the ring read, or of the shared-memory record.
    cpu: u32,
}

impl RecordReader for RecordTaker<'_> {
    fn record(&mut self, record: &[u8], at: usize) {
        self.take(record, Some(at), None);
    }

    fn published(&mut self, first: &[u8], second: &[u8]) {
        if let Some(Archive::File(file)) = self.archive.as_mut() {
            file.write_published(first, second);
        }
    }
}

impl RecordTaker<'_> {
    /// Takes a record at `at` of a perf ring being read, or (None) one that
    /// is not; `process`: its process as described already (a shared-memory
    /// producer's, read when the recorder took it).
    fn take(&mut self, bytes: &[u8], at: Option<usize>, process: Option<&ProcessInfo>) {
        let cpu = self.cpu;
        let glance = Glance::of(bytes);
        // A sample the session's thread will not see: counted, not copied.
        let counted_only = self.count_samples && glance.sample.is_some();
        if let Some(scope) = self.sched.as_mut() {
            scope.observe(bytes);
        }
        if let Some((pid, info)) = description_needed(&glance, bytes, self.described, process) {
            if let Some(archive) = self.archive.as_mut() {
                archive.process(at, pid, glance.time(bytes), cpu, &info);
            }
            if !counted_only {
                self.round.described.push((self.round.bytes.len(), info));
            }
        }
        if let Some(archive) = self.archive.as_mut() {
            archive.take(bytes, glance.sample.map(|s| s.time), at.is_some());
        }
        match glance.sample {
            Some(sample) if counted_only => match self.round.counted.last_mut() {
                Some((id, n)) if *id == sample.id => *n += 1,
                _ => self.round.counted.push((sample.id, 1)),
            },
            _ => self.round.bytes.extend_from_slice(bytes),
        }
    }
}

/// What the drain reads of a record, once: its type and, of a sample, the
/// fields every sample starts with (PERF_SAMPLE_IDENTIFIER, TID, TIME).
struct Glance {
    kind: u32,
    sample: Option<SampleStart>,
}

#[derive(Clone, Copy)]
struct SampleStart {
    id: u64,
    pid: u32,
    time: u64,
}

impl Glance {
    fn of(record: &[u8]) -> Glance {
        let kind = u32_at(record, 0).unwrap_or(0);
        let sample = if kind == PERF_RECORD_SAMPLE {
            // id, then pid and tid, then time.
            match (u64_at(record, HEADER_LEN), u32_at(record, HEADER_LEN + 8), u64_at(record, HEADER_LEN + 16)) {
                (Some(id), Some(pid), Some(time)) => Some(SampleStart { id, pid, time }),
                _ => None,
            }
        } else {
            None
        };
        Glance { kind, sample }
    }

    /// The pid a sample, a COMM or an EXIT record names.
    fn pid(&self, record: &[u8]) -> Option<u32> {
        match (self.kind, self.sample) {
            (_, Some(sample)) => Some(sample.pid),
            (PERF_RECORD_COMM | PERF_RECORD_EXIT, _) => u32_at(record, HEADER_LEN),
            _ => None,
        }
    }

    /// The time of the record, for the description written before it: a
    /// sample's own, or the sample_id trailer's (last 32 bytes: pid, tid,
    /// time, cpu, res, id) of anything else.
    fn time(&self, record: &[u8]) -> u64 {
        match self.sample {
            Some(sample) => sample.time,
            None => record.len().checked_sub(24).and_then(|at| u64_at(record, at)).unwrap_or(0),
        }
    }
}

/// A sample's CPU (after id, pid, tid and time).
fn sample_cpu(record: &[u8]) -> Option<u32> {
    (u32_at(record, 0)? == PERF_RECORD_SAMPLE).then(|| u32_at(record, HEADER_LEN + 24)).flatten()
}

/// The processes described since their first sample. A process that
/// exits is forgotten, so that a reused pid is described afresh; but only
/// two rounds after its EXIT was read: the rings are read one after the
/// other, so a sample older than the EXIT may come from another CPU's ring
/// later in the same round, or in the next one (perf's round argument,
/// `order.rs`), and must not describe the process again.
#[derive(Default)]
pub(crate) struct Described {
    pids: FxHashSet<u32>,
    /// Exits read in this round, and in the one before.
    exited: [Vec<u32>; 2],
    /// The pid of the last sample, known described: a ring holds runs of
    /// one process's samples, and this spares each a look in `pids`.
    last_sample_pid: Option<u32>,
    /// The processes running when the session started, as `/proc` showed
    /// them then (`processes::describe_running`): the description of one
    /// gone before its first event was read. Each is forgotten at its
    /// first event, its exec or its exit.
    at_start: FxHashMap<u32, ProcessInfo>,
}

impl Described {
    /// Knowing the processes that were running when the session started.
    pub(crate) fn with_running(at_start: FxHashMap<u32, ProcessInfo>) -> Described {
        Described { at_start, ..Described::default() }
    }

    /// Starts a round: forgets the exits of the round before the last.
    fn next_round(&mut self) {
        // A pid forgotten below may come back as a new process.
        self.last_sample_pid = None;
        let [older, last] = &mut self.exited;
        for pid in older.drain(..) {
            self.pids.remove(&pid);
            self.at_start.remove(&pid);
        }
        std::mem::swap(older, last);
    }

    /// `pid`'s description at its first event: `/proc` now, or, if the
    /// process is gone already, what it showed when the session started.
    fn at_first_event(&mut self, pid: u32) -> ProcessInfo {
        let now = ProcessInfo::read(Path::new("/proc"), pid);
        let at_start = self.at_start.remove(&pid);
        match at_start {
            Some(at_start) if now.is_gone() => at_start,
            _ => now,
        }
    }
}

/// The description `record` calls for: a process's first sample (since it
/// was last seen to exit), or an exec. Read now, unless its source
/// described it already (`known`: a shared-memory producer read before
/// its events were on, which may have exited since).
fn description_needed(glance: &Glance, record: &[u8], described: &mut Described, known: Option<&ProcessInfo>) -> Option<(u32, ProcessInfo)> {
    let pid = glance.pid(record)?;
    match glance.kind {
        PERF_RECORD_SAMPLE if described.last_sample_pid == Some(pid) => None,
        PERF_RECORD_SAMPLE => {
            described.last_sample_pid = Some(pid);
            if !described.pids.insert(pid) {
                return None;
            }
            let info = match known {
                Some(known) => known.clone(),
                None => described.at_first_event(pid),
            };
            Some((pid, info))
        }
        PERF_RECORD_COMM if u16_at(record, 4)? & PERF_RECORD_MISC_COMM_EXEC != 0 => {
            // Another program now: what the start showed is not it.
            described.at_start.remove(&pid);
            Some((pid, known.cloned().unwrap_or_else(|| ProcessInfo::read(Path::new("/proc"), pid))))
        }
        PERF_RECORD_EXIT => {
            // pid, ppid, tid: the process itself exits when tid == pid.
            if u32_at(record, HEADER_LEN + 8)? == pid {
                described.exited[1].push(pid);
            }
            None
        }
        _ => None,
    }
}

/// The samples in a round: what dropping it loses.
fn samples_in(round: &Round) -> u64 {
    let counted: u64 = round.counted.iter().map(|(_, n)| n).sum();
    counted + back_to_back(&round.bytes).filter(|r| kind(r) == PERF_RECORD_SAMPLE).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described_at_start(pid: u32, executable: &str) -> Described {
        let info = ProcessInfo { executable: Some(executable.into()), pid_in_container: Some(1), ..ProcessInfo::default() };
        Described::with_running([(pid, info)].into_iter().collect())
    }

    /// The pid of a process that has exited and been reaped.
    fn a_gone_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        child.id()
    }

    #[test]
    fn a_process_gone_before_its_first_event_is_described_as_the_start_showed_it() {
        let pid = a_gone_pid();
        let mut described = described_at_start(pid, "/usr/bin/short-lived");
        let info = described.at_first_event(pid);
        assert_eq!((info.executable.as_deref(), info.pid_in_container), (Some("/usr/bin/short-lived"), Some(1)));
        assert!(described.at_first_event(pid).is_gone(), "used once: a later process under the pid is not it");
    }

    #[test]
    fn a_process_still_running_at_its_first_event_is_described_as_it_is_now() {
        let me = std::process::id();
        let mut described = described_at_start(me, "/what/the/start/showed");
        let info = described.at_first_event(me);
        assert_eq!(info.executable, ProcessInfo::read(Path::new("/proc"), me).executable);
        assert!(described.at_start.is_empty());
    }

    #[test]
    fn what_the_start_showed_of_a_process_is_forgotten_two_rounds_after_its_exit() {
        let pid = a_gone_pid();
        let mut described = described_at_start(pid, "/usr/bin/short-lived");
        described.exited[1].push(pid);
        described.next_round();
        assert!(described.at_start.contains_key(&pid), "a sample older than the exit may still come this round");
        described.next_round();
        assert!(described.at_first_event(pid).is_gone());
    }
}

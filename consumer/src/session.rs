//! A recording session: perf events on every CPU, read in time order, each
//! event attributed to the thread and process that emitted it.
//!
//! Start-up follows the race-free recipe:
//! 1. per CPU, a dummy sideband event (COMM with exec flag, FORK, EXIT,
//!    MMAP2, and NAMESPACES where permitted) is opened, its ring mapped,
//!    and enabled;
//! 2. `/proc` is read, each thread stamped with the time of its read;
//! 3. only then are the tracepoints attached (`attach.rs`), each CPU's
//!    event writing into that CPU's event ring.
//!
//! Each CPU has two rings: sideband, and tracepoint events. (perf, and the
//! plan this started from, share one ring per CPU through SET_OUTPUT.) The
//! kernel counts LOST per ring, and a LOST record does not say which kind
//! of record was dropped, so in a shared ring a dropped FORK would be
//! reported as a dropped event. Apart, "lost" means lost events (received
//! plus lost equals emitted, tested), and a sideband loss, which can spoil
//! attribution, is reported as such. The price is one more mapping per CPU;
//! both rings are merged by timestamp.
//!
//! Afterwards [`Session::poll`] reads all rings in rounds, orders records
//! (`order.rs`), replays sideband into the thread table and yields
//! [`Output`]s. Glob patterns, and exact ones when asked, are re-checked
//! against tracefs so tracepoints registered later are attached too.

use std::borrow::Cow;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashSet;

use super::archive::{ArchiveOptions, ArchiveWriter, Descriptions, EVENTS_NAME, SIDEBAND_NAME};
use super::attach::{perf_error, Window};
use super::attribution::{Attribution, Fallback, Pending};
use super::drain::{Archive, Attached, Control, CpuRing, Described, Drain, Round, Shared};
use super::flight::{DumpRequest, FlightDump, FlightOptions, FlightWindow};
use super::decode::decode_each;
use super::error::{DecodeError, Error};
use super::eventheader::{decode_eventheader, is_eventheader, Field};
use super::format::EventFormat;
use super::namespaces::Namespaces;
use super::processes::ProcessInfo;
use super::record::{parse, Record};
use super::ring::Ring;
use usertrace::Pattern;

use super::sched_scope::{SchedScope, SCHED_PATTERNS};
use super::shm::ShmSource;
use super::select::systems_of;
use super::threads::ThreadTable;
use usertrace::Errno;
use super::{procfs, sys};

/// What to record and how.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// `[SYSTEM:]NAME` patterns with `*` and `?`.
    pub patterns: Vec<String>,
    /// Data pages per CPU ring; rounded up to a power of two.
    pub ring_pages: usize,
    /// Wait for exact names that do not exist yet, instead of failing.
    pub wait_for_exact: bool,
    /// How often tracefs is re-read for tracepoints registered later.
    pub rescan_interval: Duration,
    /// tracefs mount point; found like the producer does when `None`.
    pub tracefs: Option<PathBuf>,
    /// Record each task's namespaces where permitted (CAP_PERFMON); the
    /// session goes on without them when the kernel refuses.
    pub namespaces: bool,
    /// Also write every record the rings give into this perf.data file
    /// (see `archive`); finish it with [`Session::finish_archive`].
    pub archive: Option<ArchiveOptions>,
    /// Keep the last seconds of records instead, as a flight recorder:
    /// [`Session::dump`] closes them into a [`FlightDump`], which
    /// [`Session::take_dumps`] hands over. Takes the place of `archive`.
    pub flight: Option<FlightOptions>,
    /// Also record the scheduling (`sched_switch`, `sched_waking`,
    /// `sched_migrate_task`) of the threads of every process whose events
    /// are recorded, and of those given to [`Session::follow_scheduling`]
    /// (see `sched_scope.rs` for how it is scoped and what it misses).
    pub sched: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            patterns: Vec::new(),
            ring_pages: 256,
            wait_for_exact: false,
            rescan_interval: Duration::from_millis(100),
            tracefs: None,
            namespaces: true,
            archive: None,
            flight: None,
            sched: false,
        }
    }
}

/// One tracepoint hit, with who emitted it.
#[derive(Debug, Clone)]
pub struct Event {
    /// CLOCK_MONOTONIC nanoseconds.
    pub time_ns: u64,
    /// The CPU it was emitted on.
    pub cpu: u32,
    /// The emitting process, in the recorder's PID namespace.
    pub pid: u32,
    /// The emitting thread, in the same namespace.
    pub tid: u32,
    /// The thread's name when it emitted the event.
    pub comm: Arc<str>,
    /// The process's (main thread's) name at that time.
    pub process: Arc<str>,
    /// The thread's namespaces at that time, when the session records
    /// them ([`Session::records_namespaces`]).
    pub namespaces: Option<Arc<Namespaces>>,
    /// The tracepoint's layout, shared by all its events.
    pub format: Arc<EventFormat>,
    /// `trace_entry` + payload, as the format's offsets expect.
    pub raw: Box<[u8]>,
}

impl Event {
    /// The tracepoint's name, e.g. `myapp_request`.
    pub fn name(&self) -> &str {
        &self.format.name
    }

    /// The decoded fields, in declaration order. An EventHeader event's
    /// come from its payload's own metadata ([`decode_eventheader`]), so
    /// their names may be composed (`struct.member`, `array[i]`) and owned.
    pub fn fields(&self) -> Result<Vec<Field<'_>>, DecodeError> {
        if is_eventheader(&self.format) {
            return decode_eventheader(&self.format, &self.raw);
        }
        let mut fields = Vec::with_capacity(self.format.fields.len());
        decode_each(&self.format, &self.raw, |name, value| fields.push((Cow::Borrowed(name), value)))?;
        Ok(fields)
    }
}

/// What a session yields, in time order.
#[derive(Debug, Clone)]
pub enum Output {
    /// A tracepoint hit.
    Event(Event),
    /// The ring of `cpu` was full and `count` events were dropped; with
    /// `sideband`, task records were dropped instead, so names may be wrong.
    Lost {
        /// The CPU whose ring overflowed.
        cpu: u32,
        /// When the kernel reported the loss: after the dropped records.
        time_ns: u64,
        /// How many records were dropped.
        count: u64,
        /// Whether they were task records rather than events.
        sideband: bool,
    },
    /// A process that emitted events, by its full name: told before its
    /// first event, and again after each exec.
    Process {
        /// When it was read: the exec, or the first event.
        time_ns: u64,
        /// The process id.
        pid: u32,
        /// Its executable and command line, as far as `/proc` showed them.
        info: ProcessInfo,
    },
    /// A thread of a process that emitted events exited (`tid == pid`: the
    /// process itself).
    Exit {
        /// When it exited.
        time_ns: u64,
        /// Its process.
        pid: u32,
        /// The thread.
        tid: u32,
    },
    /// A process has tracepoints the session asked for, in shared memory,
    /// that it cannot record: another recorder holds them, or the kernel
    /// does not let this one write their enable words. Told once.
    NotRecorded(Box<crate::NotRecorded>),
    /// A tracepoint was attached (at start, or later when it appeared).
    Attached {
        /// The tracepoint's layout.
        format: Arc<EventFormat>,
        /// When it was attached.
        time_ns: u64,
        /// Whether events written while it was being attached may be lost.
        window: Window,
    },
}

/// Counters over the whole session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Events yielded.
    pub events: u64,
    /// Lost events per CPU, by CPU number.
    pub lost: Vec<(u32, u64)>,
    /// Lost sideband (task) records, all CPUs.
    pub lost_sideband: u64,
    /// Records that could not be parsed (should stay 0).
    pub malformed: u64,
    /// Events the recorder itself dropped, apart from what the rings lost:
    /// rounds its own thread could not take in time (see `drain.rs`).
    pub dropped: u64,
    /// Threads known from /proc and sideband.
    pub threads: usize,
}

impl Stats {
    /// Events lost in the rings over all CPUs (sideband losses and the
    /// recorder's own drops not included).
    pub fn lost_total(&self) -> u64 {
        self.lost.iter().map(|l| l.1).sum()
    }
}

/// A live recording.
///
/// Open it with the events to record, then [`poll`](Self::poll) until done
/// and [`flush`](Self::flush). It needs a kernel with user_events, or
/// producers on shared memory (which need none), and the right to open
/// perf events on every CPU (root or CAP_PERFMON).
///
/// ```no_run
/// use std::time::Duration;
/// use usertrace_consumer::{Output, Session, SessionOptions};
///
/// let options = SessionOptions { patterns: vec!["myapp_*".into()], ..SessionOptions::default() };
/// let mut session = Session::open(&options)?;
/// for _ in 0..50 {
///     for output in session.poll(Duration::from_millis(100))? {
///         match output {
///             Output::Event(event) => {
///                 print!("{} {}/{} {}", event.time_ns, event.process, event.tid, event.name());
///                 for (name, value) in event.fields()? {
///                     print!(" {name}={value}");
///                 }
///                 println!();
///             }
///             Output::Lost { cpu, count, .. } => eprintln!("CPU {cpu}: {count} lost"),
///             Output::Attached { format, .. } => eprintln!("attached {}", format.full_name()),
///             Output::Process { pid, info, .. } => eprintln!("{pid} is {:?}", info.command_line),
///             Output::Exit { .. } => {}
///             Output::NotRecorded(not) => eprintln!("pid {} not recorded: {}", not.pid, not.reason),
///         }
///     }
/// }
/// let _rest = session.flush();
/// eprintln!("{} events, {} lost", session.stats().events, session.stats().lost_total());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Session {
    namespaces: bool,
    attribution: Attribution,
    /// Every tracepoint attached so far, as the rounds told.
    attached: Vec<Arc<EventFormat>>,
    /// Lost events and task records, per CPU, as the LOST records said.
    lost: Vec<(u32, u64)>,
    lost_sideband: u64,
    malformed: u64,
    shared: Arc<Shared>,
    rounds: Receiver<Result<Round, Error>>,
    control: Sender<Control>,
    drain: Option<JoinHandle<Result<(), Error>>>,
    /// A flight recorder's closed dumps, until taken.
    dumps: Option<Receiver<FlightDump>>,
    /// How the drain thread ended, once it has.
    drained: Option<Result<(), Error>>,
}

impl Session {
    /// Opens the sideband, reads /proc, then attaches the matching
    /// tracepoints; recording has begun when this returns.
    pub fn open(options: &SessionOptions) -> Result<Session, Error> {
        let sched_patterns: &[&str] = if options.sched { &SCHED_PATTERNS } else { &[] };
        let patterns = options.patterns.iter().map(String::as_str).chain(sched_patterns.iter().copied()).map(Pattern::parse).collect::<Result<Vec<_>, _>>()?;
        if patterns.is_empty() {
            return Err(Error::NoPatterns);
        }
        let tracefs = match &options.tracefs {
            Some(t) => t.clone(),
            // Without user_events, producers use shared memory, which needs
            // no tracefs: the session records them alone. The scheduler's
            // tracepoints are the kernel's own and need only tracefs itself,
            // so --sched works wherever tracefs is mounted.
            None => match find_tracefs() {
                Ok(t) => t,
                Err(Error::Unavailable(status)) if status.availability == usertrace::Availability::UserEventsMissing && status.tracefs.is_some() => {
                    status.tracefs.clone().expect("checked just above")
                }
                Err(Error::Unavailable(status)) if !options.sched => status.tracefs.clone().unwrap_or_else(|| "/sys/kernel/tracing".into()),
                Err(e) => return Err(e),
            },
        };
        let cpus = sys::online_cpus().map_err(|error| Error::Io { path: "/sys/devices/system/cpu/online".into(), error })?;
        let pages = options.ring_pages.max(1).next_power_of_two();
        let page = 4096u32;
        let mut rings = Vec::with_capacity(cpus.len());
        // Task records are few, but a fork storm must fit.
        let sideband_pages = pages.max(16);
        let wakeup = |pages: usize| (pages as u32 * page / 4).max(page);
        let mut namespaces = options.namespaces;
        for &cpu in &cpus {
            let ring_error = |error| Error::Io { path: format!("perf ring of CPU {cpu}").into(), error };
            let sideband = open_sideband(cpu, wakeup(sideband_pages), &mut namespaces)?;
            let sideband_ring = Ring::map(sideband.as_fd(), sideband_pages).map_err(ring_error)?;
            let mut attr = sys::ring_owner_attr(wakeup(pages));
            let events = sys::open(&mut attr, cpu, None).map_err(|e| perf_error("perf_event_open(ring)", cpu, e))?;
            let events_ring = Ring::map(events.as_fd(), pages).map_err(ring_error)?;
            rings.push(CpuRing { cpu, sideband, sideband_ring, events, events_ring });
        }
        let sideband_id = match rings.first() {
            Some(r) if options.archive.is_some() || options.flight.is_some() => {
                sys::event_id(r.sideband.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ID", r.cpu, e))?
            }
            _ => 0,
        };
        let mut archive = match (&options.archive, &options.flight) {
            (_, Some(flight)) => {
                let carriers = carriers(&rings, wakeup(sideband_pages), wakeup(pages), namespaces)?;
                Some(Archive::Flight(Box::new(FlightWindow::new(flight.clone(), carriers, tracefs.clone(), rings.len() as u32, sideband_id))))
            }
            (Some(file), None) => {
                let mut writer = ArchiveWriter::create(file, &tracefs, rings.len() as u32)?;
                writer.describe_all(&carriers(&rings, wakeup(sideband_pages), wakeup(pages), namespaces)?);
                Some(Archive::File(Box::new(writer)))
            }
            (None, None) => None,
        };
        for r in &rings {
            sys::enable(r.sideband.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ENABLE(sideband)", r.cpu, e))?;
        }
        let mut threads = ThreadTable::new();
        procfs::snapshot(Path::new("/proc"), &mut threads, namespaces, |thread| match &mut archive {
            Some(Archive::File(file)) => file.synthesize_thread(thread, sideband_id),
            Some(Archive::Flight(window)) => window.seed(thread),
            None => {}
        });
        if let Some(Archive::File(file)) = &mut archive {
            file.finish_init()?;
        }
        let (dumps_tx, dumps_rx) = match &archive {
            Some(Archive::Flight(_)) => {
                let (tx, rx) = mpsc::channel();
                (Some(tx), Some(rx))
            }
            _ => (None, None),
        };

        let systems = systems_of(&patterns);
        let shm_patterns = patterns.clone();
        let rescan = patterns.iter().any(|p| p.is_glob()) || options.wait_for_exact;
        let mut drain = Drain {
            tracefs,
            patterns,
            systems,
            rings,
            attachments: Vec::new(),
            attached_tracepoints: FxHashSet::default(),
            rescan,
            rescan_interval: options.rescan_interval,
            last_scan: Instant::now(),
            attach_requests: None,
            archive,
            dumps: dumps_tx,
            described: Described::default(),
            attached: Vec::new(),
            sched: options.sched.then(SchedScope::default),
            shm: ShmSource::new(shm_patterns),
            shm_busy: false,
        };
        drain.attach_new()?;
        if !options.wait_for_exact {
            for p in drain.patterns.iter().filter(|p| !p.is_glob()) {
                let attached = drain.attachments.iter().map(|a| &a.format).chain(drain.shm.formats());
                if !attached.into_iter().any(|f| p.matches(&f.system, &f.name)) {
                    return Err(Error::UnknownEvent { name: p.as_str().to_owned() });
                }
            }
        }
        let lost = drain.rings.iter().map(|r| (r.cpu, 0)).collect();
        let mut session = Session {
            namespaces,
            attribution: Attribution::new(threads, Fallback::Proc),
            attached: Vec::new(),
            lost,
            lost_sideband: 0,
            malformed: 0,
            shared: Arc::new(Shared::default()),
            rounds: mpsc::channel().1,
            control: mpsc::channel().0,
            drain: None,
            drained: None,
            dumps: dumps_rx,
        };
        // What was attached here is known before any event of it comes.
        for attached in std::mem::take(&mut drain.attached) {
            session.take_attached(attached);
        }
        let (round_tx, round_rx) = mpsc::channel();
        let (control_tx, control_rx) = mpsc::channel();
        let shared = session.shared.clone();
        let handle = std::thread::Builder::new()
            .name("usertrace-drain".into())
            .spawn(move || drain.run(shared, round_tx, control_rx))
            .map_err(|error| Error::Io { path: "the drain thread".into(), error })?;
        session.rounds = round_rx;
        session.control = control_tx;
        session.drain = Some(handle);
        Ok(session)
    }

    fn take_attached(&mut self, attached: Attached) {
        for id in &attached.ids {
            self.attribution.add_event(*id, attached.format.clone());
        }
        // A scheduler tracepoint opened anew with another filter (`--sched`)
        // has new ids, and was attached before.
        if self.attached.iter().any(|f| f.id == attached.format.id) {
            return;
        }
        self.attached.push(attached.format.clone());
        self.attribution.push(attached.time_ns, Pending::Attached { format: attached.format, window: attached.window });
    }

    /// Attaches at once to matching events that a launched command's
    /// producers announce (see [`crate::AttachRequests`]), rather than at the
    /// next tracefs scan.
    pub fn listen_for_attach_requests(&mut self, requests: crate::AttachRequests) {
        let _ = self.control.send(Control::AttachRequests(requests));
    }

    /// With [`SessionOptions::sched`], records the scheduling of process
    /// `pid`'s threads (and of those it forks) from now on: a command the
    /// recorder launched, before its first event.
    pub fn follow_scheduling(&self, pid: u32) {
        let _ = self.control.send(Control::FollowScheduling(pid));
    }

    /// Asks a flight recorder for a dump: its window closes
    /// [`FlightOptions::after`] later, and goes to [`take_dumps`]'s
    /// receiver. A request while one is open joins it. Without a flight
    /// recorder, nothing.
    ///
    /// [`take_dumps`]: Self::take_dumps
    pub fn dump(&self, request: DumpRequest) {
        let _ = self.control.send(Control::Dump(request));
    }

    /// Where a flight recorder's dumps arrive, closed and ready to write
    /// (on another thread: writing one never holds up recording). Once.
    pub fn take_dumps(&mut self) -> Option<Receiver<FlightDump>> {
        self.dumps.take()
    }

    /// Whether events carry namespaces: asked for and permitted.
    pub fn records_namespaces(&self) -> bool {
        self.namespaces
    }

    /// The tracepoints attached so far (as the rounds taken so far tell).
    pub fn attached(&self) -> impl Iterator<Item = &EventFormat> {
        self.attached.iter().map(|f| &**f)
    }

    /// Waits up to `timeout` for the drain thread's next round, takes every
    /// round it has read since, and returns what is now safely in order.
    pub fn poll(&mut self, timeout: Duration) -> Result<Vec<Output>, Error> {
        let mut out = Vec::new();
        self.poll_each(timeout, |o| out.push(o))?;
        Ok(out)
    }

    /// [`poll`](Self::poll), handing each output to `each` as it is
    /// released rather than gathering them: a backlog released in one round
    /// then needs no vector as long as the backlog (100,000 events are about
    /// 10 MB of it).
    pub fn poll_each(&mut self, timeout: Duration, mut each: impl FnMut(Output)) -> Result<(), Error> {
        let first = match self.rounds.recv_timeout(timeout) {
            Ok(item) => item,
            Err(_) => return Ok(()),
        };
        self.take_round(first, &mut each)?;
        while let Ok(item) = self.rounds.try_recv() {
            self.take_round(item, &mut each)?;
        }
        Ok(())
    }

    /// Stops the drain thread after a last read of the rings, takes what it
    /// read, and releases everything, in order. Call once the producers are
    /// done (or on Ctrl-C); later polls yield nothing.
    pub fn flush(&mut self) -> Vec<Output> {
        let mut out = Vec::new();
        self.flush_each(|o| out.push(o));
        out
    }

    /// [`flush`](Self::flush), handing each output to `each` as it is
    /// released (see [`poll_each`](Self::poll_each)).
    pub fn flush_each(&mut self, mut each: impl FnMut(Output)) {
        self.stop_drain();
        while let Ok(item) = self.rounds.try_recv() {
            // An error here (a failed archive write) is kept for
            // finish_archive; the rounds still count.
            if let Err(e) = self.take_round(item, &mut each) {
                self.drained = Some(Err(e));
            }
        }
        self.attribution.flush(&mut each);
    }

    /// How the archive ended: written and closed by the last round, or the
    /// error that gave it up. Call after [`flush`](Self::flush). Without an
    /// archive, Ok.
    pub fn finish_archive(&mut self) -> Result<(), Error> {
        self.stop_drain();
        self.drained.take().unwrap_or(Ok(()))
    }

    /// Tells the drain thread to stop, and waits for it.
    fn stop_drain(&mut self) {
        if let Some(handle) = self.drain.take() {
            // ATOMICS: Release pairs with the drain thread's Acquire load:
            // it sees the stop, reads once more and ends.
            self.shared.stop.store(true, Ordering::Release);
            let ended = handle.join().unwrap_or_else(|_| Err(Error::Io {
                path: "the drain thread".into(),
                error: std::io::Error::other("it panicked"),
            }));
            if ended.is_err() {
                self.drained = Some(ended);
            }
        }
    }

    /// Counters since the session opened.
    pub fn stats(&self) -> Stats {
        Stats {
            events: self.attribution.events,
            lost: self.lost.clone(),
            lost_sideband: self.lost_sideband,
            malformed: self.malformed,
            // ATOMICS: Relaxed; a count read for a report.
            dropped: self.shared.dropped.load(Ordering::Relaxed),
            threads: self.attribution.threads.len(),
        }
    }

    /// Parses a round's records into the attribution's queue, then ends
    /// the round there.
    fn take_round(&mut self, item: Result<Round, Error>, each: &mut impl FnMut(Output)) -> Result<(), Error> {
        let round = item?;
        // ATOMICS: Relaxed; see Drain::send.
        self.shared.queued_bytes.fetch_sub(round.bytes.capacity(), Ordering::Relaxed);
        self.malformed += round.broken_rings;
        for attached in round.attached {
            self.take_attached(attached);
        }
        for not_recorded in round.not_recorded {
            self.attribution.push(not_recorded.time_ns, Pending::NotRecorded(Box::new(not_recorded)));
        }
        let mut described = round.described.into_iter().peekable();
        let mut at = 0;
        for segment in &round.segments {
            while at < segment.end {
                let size = round.bytes.get(at + 6..at + 8).map_or(0, |b| usize::from(u16::from_ne_bytes([b[0], b[1]])));
                let Some(bytes) = round.bytes.get(at..at + size).filter(|_| size >= 8) else {
                    self.malformed += 1;
                    break;
                };
                let info = described.next_if(|(offset, _)| *offset == at).map(|(_, info)| Box::new(info));
                match parse(bytes) {
                    Ok(record) => {
                        if let Some((time, mut pending)) = to_pending(record, info) {
                            if let Pending::Lost { count, sideband, cpu } = &mut pending {
                                *sideband = segment.sideband;
                                *cpu = segment.cpu;
                                if segment.sideband {
                                    self.lost_sideband += *count;
                                } else if let Some(l) = self.lost.iter_mut().find(|l| l.0 == segment.cpu) {
                                    l.1 += *count;
                                }
                            }
                            self.attribution.push(time, pending);
                        }
                    }
                    Err(_) => self.malformed += 1,
                }
                at += size;
            }
            at = segment.end;
        }
        self.attribution.end_round(each);
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop_drain();
    }
}

/// The pending record of `record`; `described` is what the drain thread
/// read of its process (an exec's COMM, a process's first sample).
fn to_pending(record: Record<'_>, described: Option<Box<ProcessInfo>>) -> Option<(u64, Pending)> {
    Some(match record {
        Record::Sample { sample, raw } => (
            sample.time,
            Pending::Sample { id: sample.id, pid: sample.pid, tid: sample.tid, cpu: sample.cpu, raw: raw.into(), described },
        ),
        Record::Comm { pid, tid, comm, exec, sample } => {
            // Read by the drain thread, while the process still existed.
            let exec = exec.then(|| described.unwrap_or_default());
            (sample.time, Pending::Comm { pid, tid, comm: String::from_utf8_lossy(comm).into(), exec })
        }
        Record::Fork(t) => (t.time, Pending::Fork { pid: t.pid, tid: t.tid, ptid: t.ptid }),
        Record::Exit(t) => (t.time, Pending::Exit { tid: t.tid }),
        Record::Namespaces { tid, namespaces, sample, .. } => {
            (sample.time, Pending::Namespaces { tid, namespaces: Box::new(namespaces) })
        }
        Record::Lost { lost, sample, .. } => (sample.time, Pending::Lost { cpu: sample.cpu, count: lost, sideband: false }),
        Record::Mmap2 { .. } | Record::Other { .. } => return None,
    })
}

/// The two dummy events of every CPU, as an archive names them.
fn carriers(rings: &[CpuRing], sideband_wakeup: u32, events_wakeup: u32, namespaces: bool) -> Result<Descriptions, Error> {
    let ids = |fd: fn(&CpuRing) -> BorrowedFd<'_>| -> Result<Vec<u64>, Error> {
        rings.iter().map(|r| sys::event_id(fd(r)).map_err(|e| perf_error("PERF_EVENT_IOC_ID", r.cpu, e))).collect()
    };
    let mut carriers = Descriptions::default();
    carriers.carrier(&ids(|r| r.sideband.as_fd())?, &sys::sideband_attr(sideband_wakeup, namespaces), SIDEBAND_NAME);
    carriers.carrier(&ids(|r| r.events.as_fd())?, &sys::ring_owner_attr(events_wakeup), EVENTS_NAME);
    Ok(carriers)
}

/// Opens one CPU's sideband event, with namespaces while `namespaces` holds;
/// a refusal of those (they need CAP_PERFMON) turns them off for the rest
/// of the session, rather than failing it.
fn open_sideband(cpu: u32, wakeup_bytes: u32, namespaces: &mut bool) -> Result<OwnedFd, Error> {
    if *namespaces {
        match sys::open(&mut sys::sideband_attr(wakeup_bytes, true), cpu, None) {
            Err(Errno(libc::EACCES | libc::EPERM)) => *namespaces = false,
            other => return other.map_err(|e| perf_error("perf_event_open(sideband)", cpu, e)),
        }
    }
    sys::open(&mut sys::sideband_attr(wakeup_bytes, false), cpu, None).map_err(|e| perf_error("perf_event_open(sideband)", cpu, e))
}

/// The tracefs mount point, or why user_events cannot be used.
pub fn find_tracefs() -> Result<PathBuf, Error> {
    let status = usertrace::status();
    match (&status.tracefs, status.is_available()) {
        (Some(t), true) => Ok(t.clone()),
        _ => Err(Error::Unavailable(Box::new(status))),
    }
}

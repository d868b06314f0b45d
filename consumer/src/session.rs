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
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashSet;

use super::archive::{ArchiveOptions, ArchiveWriter, EVENTS_NAME, EXIT_PROBE_NAME, SIDEBAND_NAME};
use super::attach::{attach, perf_error, Attachment, Window};
use super::attribution::{Attribution, Pending, ProcessSource};
use super::decode::decode_each;
use super::error::{DecodeError, Error};
use super::eventheader::{decode_eventheader, is_eventheader, Field};
use super::format::EventFormat;
use super::namespaces::Namespaces;
use super::processes::ProcessInfo;
use super::record::{parse, Record};
use super::ring::Ring;
use usertrace::Pattern;

use super::select::{load_with_text, scan, systems_of};
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
    /// Threads known from /proc and sideband.
    pub threads: usize,
}

impl Stats {
    /// Lost events over all CPUs (sideband losses not included).
    pub fn lost_total(&self) -> u64 {
        self.lost.iter().map(|l| l.1).sum()
    }
}

struct CpuRing {
    cpu: u32,
    sideband: OwnedFd,
    sideband_ring: Ring,
    /// Owner of the ring the tracepoints of this CPU write into.
    events: OwnedFd,
    events_ring: Ring,
    lost: u64,
    lost_sideband: u64,
}

/// A live recording.
///
/// Open it with the events to record, then [`poll`](Self::poll) until done
/// and [`flush`](Self::flush). It needs a kernel with user_events and the
/// right to open perf events on every CPU (root or CAP_PERFMON).
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
///         }
///     }
/// }
/// let _rest = session.flush();
/// eprintln!("{} events, {} lost", session.stats().events, session.stats().lost_total());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Session {
    tracefs: PathBuf,
    patterns: Vec<Pattern>,
    systems: Vec<String>,
    rings: Vec<CpuRing>,
    attachments: Vec<Attachment>,
    attached_tracepoints: FxHashSet<u64>,
    namespaces: bool,
    attribution: Attribution,
    rescan_interval: Duration,
    last_scan: Instant,
    rescan: bool,
    malformed: u64,
    attach_requests: Option<crate::AttachRequests>,
    archive: Option<ArchiveWriter>,
}

impl Session {
    /// Opens the sideband, reads /proc, then attaches the matching
    /// tracepoints; recording has begun when this returns.
    pub fn open(options: &SessionOptions) -> Result<Session, Error> {
        let patterns = options.patterns.iter().map(|p| Pattern::parse(p)).collect::<Result<Vec<_>, _>>()?;
        if patterns.is_empty() {
            return Err(Error::NoPatterns);
        }
        let tracefs = match &options.tracefs {
            Some(t) => t.clone(),
            None => find_tracefs()?,
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
            rings.push(CpuRing { cpu, sideband, sideband_ring, events, events_ring, lost: 0, lost_sideband: 0 });
        }
        let mut archive = match &options.archive {
            Some(archive) => Some(open_archive(archive, &tracefs, &rings, wakeup(sideband_pages), wakeup(pages), namespaces)?),
            None => None,
        };
        for r in &rings {
            sys::enable(r.sideband.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ENABLE(sideband)", r.cpu, e))?;
        }
        let mut threads = ThreadTable::new();
        let sideband_id = match (&archive, rings.first()) {
            (Some(_), Some(r)) => sys::event_id(r.sideband.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ID", r.cpu, e))?,
            _ => 0,
        };
        procfs::snapshot(Path::new("/proc"), &mut threads, namespaces, |thread| {
            if let Some(archive) = &mut archive {
                archive.synthesize_thread(thread, sideband_id);
            }
        });
        if let Some(archive) = &mut archive {
            archive.finish_init()?;
        }

        let systems = systems_of(&patterns);
        let rescan = patterns.iter().any(|p| p.is_glob()) || options.wait_for_exact;
        let mut session = Session {
            tracefs,
            patterns,
            systems,
            rings,
            attachments: Vec::new(),
            attached_tracepoints: FxHashSet::default(),
            namespaces,
            attribution: Attribution::new(threads, ProcessSource::Proc),
            rescan_interval: options.rescan_interval,
            last_scan: Instant::now(),
            rescan,
            malformed: 0,
            attach_requests: None,
            archive,
        };
        session.attach_new()?;
        if !options.wait_for_exact {
            for p in session.patterns.iter().filter(|p| !p.is_glob()) {
                if !session.attachments.iter().any(|a| p.matches(&a.format.system, &a.format.name)) {
                    return Err(Error::UnknownEvent { name: p.as_str().to_owned() });
                }
            }
        }
        Ok(session)
    }

    /// Attaches every matching tracepoint not attached yet.
    fn attach_new(&mut self) -> Result<(), Error> {
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
            let attachment = match attach(format.clone(), &owners) {
                Ok(a) => a,
                // Deleted between scan and open.
                Err(Error::Perf { errno, .. }) if errno.0 == libc::ENOENT => continue,
                Err(e) => return Err(e),
            };
            for (_, _, id) in &attachment.events {
                self.attribution.add_event(*id, format.clone());
            }
            if let Some(archive) = &mut self.archive {
                let ids: Vec<u64> = attachment.events.iter().map(|(_, _, id)| *id).collect();
                archive.describe_tracepoint(&ids, &sys::tracepoint_attr(format.id), &format, &text);
            }
            self.attribution.push(sys::monotonic_ns(), Pending::Attached { format, window: attachment.window });
            self.attachments.push(attachment);
        }
        Ok(())
    }

    /// Attaches at once to matching events that a launched command's
    /// producers announce (see [`crate::AttachRequests`]), rather than at the
    /// next tracefs scan.
    pub fn listen_for_attach_requests(&mut self, requests: crate::AttachRequests) {
        self.rescan = true;
        self.attach_requests = Some(requests);
    }

    /// Whether events carry namespaces: asked for and permitted.
    pub fn records_namespaces(&self) -> bool {
        self.namespaces
    }

    /// The tracepoints attached so far.
    pub fn attached(&self) -> impl Iterator<Item = &EventFormat> {
        self.attachments.iter().map(|a| &*a.format)
    }

    /// Waits up to `timeout` for data, reads every ring once, attaches
    /// tracepoints that appeared, and returns what is now safely in order.
    pub fn poll(&mut self, timeout: Duration) -> Result<Vec<Output>, Error> {
        let mut out = Vec::new();
        self.poll_each(timeout, |o| out.push(o))?;
        Ok(out)
    }

    /// [`poll`](Self::poll), handing each output to `each` as it is
    /// released rather than gathering them: a backlog drained in one round
    /// then needs no vector as long as the backlog (100,000 events are about
    /// 10 MB of it), which would be memory fresh from the kernel.
    pub fn poll_each(&mut self, timeout: Duration, mut each: impl FnMut(Output)) -> Result<(), Error> {
        let mut fds: Vec<_> = self.rings.iter().flat_map(|r| [r.sideband.as_fd(), r.events.as_fd()]).collect();
        fds.extend(self.attach_requests.as_ref().map(|r| r.as_fd()));
        let wait = timeout.min(self.rescan_interval).as_millis().min(i32::MAX as u128) as i32;
        sys::poll_readable(&fds, wait).map_err(|e| Error::Perf { op: "poll", cpu: 0, errno: e })?;
        drop(fds);
        let announced = self.attach_requests.as_ref().is_some_and(|r| r.drain() > 0);
        if announced || (self.rescan && self.last_scan.elapsed() >= self.rescan_interval) {
            self.attach_new()?;
        }
        self.read_rings();
        let archive = &mut self.archive;
        self.attribution.end_round(&mut |output| {
            describe_in(archive, &output);
            each(output)
        });
        match &mut self.archive {
            Some(archive) => archive.end_round(),
            None => Ok(()),
        }
    }

    /// Reads what is left and releases everything, in order. Call once the
    /// producers are done (or on Ctrl-C); the session may still be polled.
    pub fn flush(&mut self) -> Vec<Output> {
        let mut out = Vec::new();
        self.flush_each(|o| out.push(o));
        out
    }

    /// [`flush`](Self::flush), handing each output to `each` as it is
    /// released (see [`poll_each`](Self::poll_each)).
    pub fn flush_each(&mut self, mut each: impl FnMut(Output)) {
        self.read_rings();
        self.provoke_lost_records();
        self.read_rings();
        let archive = &mut self.archive;
        self.attribution.flush(&mut |output| {
            describe_in(archive, &output);
            each(output)
        });
    }

    /// Writes the archive's last records and headers, and closes it: call
    /// after [`flush`](Self::flush). Without an archive, does nothing.
    pub fn finish_archive(&mut self) -> Result<(), Error> {
        match self.archive.take() {
            Some(mut archive) => archive.finish(),
            None => Ok(()),
        }
    }

    /// Counters since the session opened.
    pub fn stats(&self) -> Stats {
        Stats {
            events: self.attribution.events,
            lost: self.rings.iter().map(|r| (r.cpu, r.lost)).collect(),
            lost_sideband: self.rings.iter().map(|r| r.lost_sideband).sum(),
            malformed: self.malformed,
            threads: self.attribution.threads.len(),
        }
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

    fn read_rings(&mut self) {
        for r in &mut self.rings {
            for sideband in [true, false] {
                let attribution = &mut self.attribution;
                let malformed = &mut self.malformed;
                let archive = &mut self.archive;
                let (ring, lost) =
                    if sideband { (&mut r.sideband_ring, &mut r.lost_sideband) } else { (&mut r.events_ring, &mut r.lost) };
                let result = ring.drain(|bytes| match parse(bytes) {
                    Ok(record) => {
                        let sample_time = matches!(record, Record::Sample { .. }).then(|| record.time()).flatten();
                        let pending = to_pending(record);
                        if let Some(archive) = archive {
                            // An exec's description goes just before its COMM
                            // record, where a reader of the file needs it.
                            if let Some((time, Pending::Comm { pid, exec: Some(info), .. })) = &pending {
                                archive.process(*pid, *time, r.cpu, info);
                            }
                            archive.copy(bytes, sample_time);
                        }
                        if let Some((time, mut pending)) = pending {
                            if let Pending::Lost { count, sideband: s, .. } = &mut pending {
                                *lost += *count;
                                *s = sideband;
                            }
                            attribution.push(time, pending);
                        }
                    }
                    Err(_) => *malformed += 1,
                });
                if result.is_err() {
                    self.malformed += 1;
                }
            }
        }
    }
}

/// A process the session describes for the first time (or again after an
/// exec) is described in the archive too, before the event that is
/// released after it: its `usertrace:process` sample.
fn describe_in(archive: &mut Option<ArchiveWriter>, output: &Output) {
    if let (Some(archive), Output::Process { time_ns, pid, info }) = (archive, output) {
        archive.process(*pid, *time_ns, 0, info);
    }
}

/// Creates the archive and names the two dummy events of every CPU in it.
fn open_archive(
    options: &ArchiveOptions,
    tracefs: &Path,
    rings: &[CpuRing],
    sideband_wakeup: u32,
    events_wakeup: u32,
    namespaces: bool,
) -> Result<ArchiveWriter, Error> {
    let mut archive = ArchiveWriter::create(options, tracefs, rings.len() as u32)?;
    let ids = |fd: fn(&CpuRing) -> BorrowedFd<'_>| -> Result<Vec<u64>, Error> {
        rings.iter().map(|r| sys::event_id(fd(r)).map_err(|e| perf_error("PERF_EVENT_IOC_ID", r.cpu, e))).collect()
    };
    archive.describe_carrier(&ids(|r| r.sideband.as_fd())?, &sys::sideband_attr(sideband_wakeup, namespaces), SIDEBAND_NAME);
    archive.describe_carrier(&ids(|r| r.events.as_fd())?, &sys::ring_owner_attr(events_wakeup), EVENTS_NAME);
    Ok(archive)
}

fn to_pending(record: Record<'_>) -> Option<(u64, Pending)> {
    Some(match record {
        Record::Sample { sample, raw } => (
            sample.time,
            Pending::Sample { id: sample.id, pid: sample.pid, tid: sample.tid, cpu: sample.cpu, raw: raw.into() },
        ),
        Record::Comm { pid, tid, comm, exec, sample } => {
            // Read now, while the ring is drained: by the time the record is
            // released in order, a short-lived process may be gone.
            let exec = exec.then(|| Box::new(ProcessInfo::read(Path::new("/proc"), pid)));
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

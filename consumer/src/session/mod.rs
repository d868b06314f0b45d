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
//! Afterwards the drain thread (`crate::drain`) reads every ring, perf's
//! and shared memory's, in rounds, and attaches tracepoints registered
//! later (glob patterns, and exact ones when asked, re-checked against
//! tracefs). [`Session::poll`] takes those rounds, orders records
//! (`order.rs`), replays sideband into the thread table and yields
//! [`Output`]s.
//!
//! Here is the session itself: opening, polling, following, flushing. The
//! steps of opening are `open.rs`; what it is asked for is `options.rs`,
//! what it yields `output.rs`, its dummy events `sideband.rs`; the rings'
//! thread is `drain.rs` (made with `Drain::open`), the naming of each
//! record `attribution.rs`.

use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashSet;

use super::attribution::{Attribution, Fallback, Mapped, Pending};
use super::drain::{Archive, Attached, Control, Drain, DrainSetup, Round, Segment, Shared};
use super::flight::{DumpRequest, FlightDump, FlightEnd};
use super::error::Error;
use super::format::EventFormat;
use super::processes::ProcessInfo;
use super::record::{back_to_back, parse, parse_with, Record};
use super::stack_scope::StackScope;
use super::sys;

mod open;
mod options;
mod output;
mod sideband;

pub use options::SessionOptions;
pub use output::{Event, Output, Stats};

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
    lost_in_shared_memory: u64,
    malformed: u64,
    shared: Arc<Shared>,
    rounds: Receiver<Result<Round, Error>>,
    control: Sender<Control>,
    drain: Option<JoinHandle<Result<Option<FlightEnd>, Error>>>,
    /// A flight recorder's closed dumps, until taken.
    dumps: Option<Receiver<FlightDump>>,
    /// A flight recorder's window once the drain has stopped, until
    /// [`finish_archive`](Self::finish_archive) closes its open dumps.
    flight_end: Option<FlightEnd>,
    /// Whether a round's buffer goes back to the drain thread (the drain's
    /// `Shared::spare`); not a flight recorder's, whose memory is bounded
    /// by the rounds as they come.
    reuse_buffers: bool,
    /// How the drain thread ended, once it has.
    drained: Option<Result<(), Error>>,
    /// The perf ids whose samples carry a user stack.
    stack_ids: FxHashSet<u64>,
}

impl Session {
    /// Opens the sideband, reads /proc, then attaches the matching
    /// tracepoints; recording has begun when this returns.
    pub fn open(options: &SessionOptions) -> Result<Session, Error> {
        let patterns = open::patterns(options)?;
        let stacks = StackScope::new(&options.stacks)?;
        // The window's parsers read samples as having no stack.
        if stacks.any() && options.flight.is_some() {
            return Err(Error::StacksWithFlight);
        }
        let names_stacks = stacks.any();
        let tracefs = open::tracefs(options)?;
        let opened = open::open_rings(options.ring_pages, options.namespaces)?;
        let (mut archive, sideband_id) = open::open_archive(options, &opened, &tracefs)?;
        opened.enable_sideband()?;
        let namespaces = opened.namespaces;
        let threads = open::snapshot(options, &mut archive, sideband_id, namespaces)?;
        // Before any tracepoint is on: a process may emit and exit at once.
        let running = crate::processes::describe_running(Path::new("/proc"));
        let (dumps_tx, dumps_rx) = match &archive {
            Some(Archive::Flight(_)) => {
                let (tx, rx) = mpsc::channel();
                (Some(tx), Some(rx))
            }
            _ => (None, None),
        };

        let mut drain = Drain::open(DrainSetup {
            tracefs,
            patterns,
            rings: opened.rings,
            archive,
            dumps: dumps_tx,
            wait_for_exact: options.wait_for_exact,
            rescan_interval: options.rescan_interval,
            sched: options.sched,
            containers: options.containers.clone(),
            hand_off: options.hand_off,
            yield_events: options.yield_events,
            stacks,
            running,
        })?;
        let lost = drain.cpus().map(|cpu| (cpu, 0)).collect();
        let mut session = Session {
            namespaces,
            attribution: Attribution::new(threads, Fallback::Proc),
            attached: Vec::new(),
            lost,
            lost_sideband: 0,
            lost_in_shared_memory: 0,
            malformed: 0,
            shared: Arc::new(Shared { stop_wake: sys::event_fd().ok(), ..Shared::default() }),
            rounds: mpsc::channel().1,
            control: mpsc::channel().0,
            drain: None,
            drained: None,
            dumps: dumps_rx,
            flight_end: None,
            reuse_buffers: options.flight.is_none(),
            stack_ids: FxHashSet::default(),
        };
        if names_stacks {
            session.attribution.name_stacks();
        }
        // What was attached here is known before any event of it comes.
        for attached in drain.take_attached() {
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
        if attached.stack {
            self.stack_ids.extend(&attached.ids);
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
    /// [`FlightOptions::after`](crate::flight::FlightOptions::after) later, and goes to [`take_dumps`]'s
    /// receiver. Each request is a dump of its own, even while another is
    /// open (in a continuous archive, a cut asked for while one is pending
    /// is that cut). Asked after [`flush`](Self::flush), it is still
    /// written, by [`finish_archive`](Self::finish_archive). Without a
    /// flight recorder, nothing.
    ///
    /// [`take_dumps`]: Self::take_dumps
    pub fn dump(&mut self, request: DumpRequest) {
        match &mut self.flight_end {
            Some(end) => end.request(request),
            None => {
                let _ = self.control.send(Control::Dump(request));
            }
        }
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
    /// error that gave it up. A flight recorder's open dumps are closed
    /// here, each handed to [`take_dumps`](Self::take_dumps)'s receiver,
    /// which then ends. Call after [`flush`](Self::flush). Without an
    /// archive, Ok.
    pub fn finish_archive(&mut self) -> Result<(), Error> {
        self.stop_drain();
        if let Some(end) = self.flight_end.take() {
            end.close();
        }
        self.drained.take().unwrap_or(Ok(()))
    }

    /// Tells the drain thread to stop, and waits for it.
    fn stop_drain(&mut self) {
        if let Some(handle) = self.drain.take() {
            // ATOMICS: Release pairs with the drain thread's Acquire load:
            // it sees the stop, reads once more and ends.
            self.shared.stop.store(true, Ordering::Release);
            if let Some(fd) = &self.shared.stop_wake {
                sys::wake(fd.as_fd());
            }
            let ended = handle.join().unwrap_or_else(|_| Err(Error::Io {
                path: "the drain thread".into(),
                error: std::io::Error::other("it panicked"),
            }));
            match ended {
                Ok(flight_end) => self.flight_end = flight_end,
                Err(e) => self.drained = Some(Err(e)),
            }
        }
    }

    /// Counters since the session opened.
    pub fn stats(&self) -> Stats {
        Stats {
            events: self.attribution.events,
            lost: self.lost.clone(),
            lost_sideband: self.lost_sideband,
            lost_in_shared_memory: self.lost_in_shared_memory,
            malformed: self.malformed,
            // ATOMICS: Relaxed; a count read for a report.
            dropped: self.shared.dropped.load(Ordering::Relaxed),
            threads: self.attribution.threads.len(),
            counted: self.attribution.counted_by_name(),
        }
    }

    /// Parses a round's records into the attribution's queue, then ends
    /// the round there.
    fn take_round(&mut self, item: Result<Round, Error>, each: &mut impl FnMut(Output)) -> Result<(), Error> {
        let round = item?;
        // ATOMICS: Relaxed; see Drain::send.
        self.shared.queued_bytes.fetch_sub(round.bytes.capacity(), Ordering::Relaxed);
        self.malformed += round.broken_rings;
        // Samples only counted, with no events yielded: the drain left them
        // out of the round.
        self.attribution.count_events(&round.counted);
        for attached in round.attached {
            self.take_attached(attached);
        }
        for not_recorded in round.not_recorded {
            self.attribution.push(not_recorded.time_ns, Pending::NotRecorded(Box::new(not_recorded)));
        }
        let mut described = round.described.into_iter().peekable();
        let mut at = 0;
        for segment in &round.segments {
            let mut walk = back_to_back(round.bytes.get(at..segment.end).unwrap_or_default());
            for bytes in walk.by_ref() {
                let info = described.next_if(|(offset, _)| *offset == at).map(|(_, info)| Box::new(info));
                self.take_record(bytes, info, segment);
                at += bytes.len();
            }
            if !walk.rest().is_empty() {
                self.malformed += 1;
            }
            at = segment.end;
        }
        self.attribution.end_round(each);
        // Its buffer goes back to the drain thread for a later round.
        if let (true, Ok(mut spare)) = (self.reuse_buffers, self.shared.spare.lock()) {
            if spare.is_none() {
                let mut bytes = round.bytes;
                bytes.clear();
                *spare = Some(bytes);
            }
        }
        Ok(())
    }

    /// Parses one record of `segment` into the attribution's queue, with
    /// what the drain read of its process, and counts what it lost.
    fn take_record(&mut self, bytes: &[u8], info: Option<Box<ProcessInfo>>, segment: &Segment) {
        let stack_ids = &self.stack_ids;
        // Without stacks, no lookup per sample.
        let parsed = if stack_ids.is_empty() { parse(bytes) } else { parse_with(bytes, |id| stack_ids.contains(&id)) };
        let Ok(record) = parsed else {
            self.malformed += 1;
            return;
        };
        let Some((time, mut pending)) = to_pending(record, info, self.attribution.names_stacks()) else { return };
        if let Pending::Lost { count, sideband, cpu, thread } = &mut pending {
            *sideband = segment.sideband;
            *cpu = segment.cpu;
            *thread = segment.thread;
            if segment.sideband {
                self.lost_sideband += *count;
            } else if segment.thread.is_some() {
                self.lost_in_shared_memory += *count;
            } else if let Some(l) = self.lost.iter_mut().find(|l| l.0 == segment.cpu) {
                l.1 += *count;
            }
        }
        self.attribution.push(time, pending);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop_drain();
    }
}

/// The pending record of `record`; `described` is what the drain thread
/// read of its process (an exec's COMM, a process's first sample);
/// `mappings`: whether mappings are of use (stacks are named).
fn to_pending(record: Record<'_>, described: Option<Box<ProcessInfo>>, mappings: bool) -> Option<(u64, Pending)> {
    Some(match record {
        Record::Sample { sample, stack, raw } => (
            sample.time,
            Pending::Sample {
                id: sample.id,
                pid: sample.pid,
                tid: sample.tid,
                cpu: sample.cpu,
                raw: raw.into(),
                stack: stack.addresses().collect(),
                described,
            },
        ),
        Record::Mmap2 { pid, addr, len, pgoff, prot, filename, sample, .. } if mappings => (
            sample.time,
            Pending::Mapped(Box::new(Mapped {
                pid,
                start: addr,
                len,
                offset: pgoff,
                executable: prot & libc::PROT_EXEC as u32 != 0,
                path: filename.into(),
            })),
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
        Record::Lost { lost, sample, .. } => (sample.time, Pending::Lost { cpu: sample.cpu, count: lost, sideband: false, thread: None }),
        Record::Mmap2 { .. } | Record::Other { .. } => return None,
    })
}

/// The tracefs mount point, or why user_events cannot be used.
pub fn find_tracefs() -> Result<PathBuf, Error> {
    let status = usertrace::status();
    match (&status.tracefs, status.is_available()) {
        (Some(t), true) => Ok(t.clone()),
        _ => Err(Error::Unavailable(Box::new(status))),
    }
}

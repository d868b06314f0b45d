//! The flight recorder's window: the last seconds of the rings' records,
//! kept by the recorder (not in overwrite-mode kernel rings), and written
//! out as a self-contained archive when something asks for a dump.
//!
//! Why a recorder-side ring of rounds rather than the kernel's overwrite
//! mode: the sideband must be read all the time (a process that exits
//! inside the window must still be named at dump time, and its `/proc`
//! read while it exists), so the rings are drained anyway; keeping the
//! drained rounds costs one copy, bounds memory by bytes we count, and lets
//! the window be cut by time. Overwrite rings would also lose the loss
//! accounting: the kernel reports no LOST for overwritten records.
//!
//! The window holds whole rounds, each as the drain thread read it, and
//! lets the oldest go once it is older than the window's time or the
//! bytes pass the cap. What a let-go round said about threads (their
//! names, namespaces, forks and exits) and processes (their
//! `usertrace:process` descriptions) is folded into [`WindowStart`]: the
//! state of every thread at the window's start, which a dump writes first,
//! as `perf record` writes the threads it found at its own start. A dump is
//! then readable alone, by `perf script` and by `usertrace convert`.
//!
//! Memory: every round's bytes are counted while anything holds them, the
//! window or a dump being written. Rounds are let go until the count and
//! the newest round fit under the cap, so a dump being written shortens
//! the window rather than adding to the cap.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashMap;

use crate::archive::{ArchiveOptions, ArchiveWriter, Descriptions};
use crate::error::Error;
use crate::namespaces::Namespaces;
use crate::procfs::ThreadAtStart;
use crate::record::{back_to_back, parse, Record};

/// How much a flight recorder keeps, and how a dump closes.
#[derive(Debug, Clone)]
pub struct FlightOptions {
    /// Keep at least this much of the most recent recording.
    pub keep: Duration,
    /// But never more than this many bytes of records (whichever is
    /// smaller wins).
    pub max_bytes: usize,
    /// How long a dump goes on recording after what asked for it.
    pub after: Duration,
    /// Instead of a window, a continuous archive cut into files: every
    /// round goes into exactly one of them. `keep` does not apply;
    /// `max_bytes` still caps the memory: a file also ends once its
    /// records reach half of it, so that it and the file before it, still
    /// being written, fit together. A dump request ends the current file
    /// at once.
    pub switch: Option<Switch>,
}

/// When a continuous archive goes on in a new file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Switch {
    /// Once the file's records reach this many bytes (they are gathered
    /// in memory until then, within [`FlightOptions::max_bytes`]).
    Size(usize),
    /// Once the file holds this long of the recording.
    Every(Duration),
    /// Only when asked ([`crate::Session::dump`]).
    Asked,
}

/// Why a dump was asked for.
#[derive(Debug, Clone)]
pub struct DumpRequest {
    /// What triggered it, as the dump and its message say it: `SIGUSR2`,
    /// `usertrace dump`, `myapp_error pid 42`.
    pub reason: String,
    /// When it was asked for, CLOCK_MONOTONIC nanoseconds.
    pub time_ns: u64,
    /// The asker's own number, handed back with the dump (to answer a
    /// `usertrace dump` that waits).
    pub token: u64,
}

/// One round's records, counted while anything holds them.
struct Chunk {
    bytes: Vec<u8>,
    /// When the drain thread read it: no record in it is newer.
    read_ns: u64,
    alive: Arc<AtomicUsize>,
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // ATOMICS: Relaxed; the count bounds memory, it orders nothing.
        self.alive.fetch_sub(self.bytes.capacity(), Ordering::Relaxed);
    }
}

/// A thread as the window's start knows it.
#[derive(Debug, Clone)]
struct StartThread {
    pid: u32,
    comm: String,
    time: u64,
    namespaces: Option<(Namespaces, u64)>,
}

/// Every thread and described process at the window's start: what the
/// let-go rounds said, folded.
#[derive(Default, Clone)]
pub(crate) struct WindowStart {
    threads: FxHashMap<u32, StartThread>,
    /// Each process's latest `usertrace:process` sample, as written.
    processes: FxHashMap<u32, Vec<u8>>,
}

impl WindowStart {
    /// A thread `/proc` showed when the session started.
    pub(crate) fn seed(&mut self, thread: &ThreadAtStart<'_>) {
        let namespaces = thread.namespaces.map(|(ns, time)| (*ns, time));
        self.threads.insert(thread.tid, StartThread { pid: thread.pid, comm: thread.comm.to_owned(), time: thread.time, namespaces });
    }

    /// Folds in the records of a round that leaves the window.
    fn fold(&mut self, bytes: &[u8]) {
        for record in back_to_back(bytes) {
            match parse(record) {
                Ok(Record::Comm { pid, tid, comm, sample, .. }) => {
                    let namespaces = self.threads.get(&tid).and_then(|t| t.namespaces);
                    self.threads.insert(tid, StartThread { pid, comm: String::from_utf8_lossy(comm).into_owned(), time: sample.time, namespaces });
                }
                Ok(Record::Fork(task)) => {
                    // A new thread has its parent's name until it sets one.
                    if let Some(parent) = self.threads.get(&task.ptid).cloned() {
                        self.threads.insert(task.tid, StartThread { pid: task.pid, time: task.time, ..parent });
                    }
                }
                Ok(Record::Exit(task)) => {
                    self.threads.remove(&task.tid);
                    if task.tid == task.pid {
                        self.processes.remove(&task.pid);
                    }
                }
                Ok(Record::Namespaces { tid, namespaces, sample, .. }) => {
                    if let Some(thread) = self.threads.get_mut(&tid) {
                        thread.namespaces = Some((namespaces, sample.time));
                    }
                }
                Ok(Record::Sample { sample, .. }) if sample.id == crate::archive::PROCESS_PERF_ID => {
                    self.processes.insert(sample.pid, record.to_vec());
                }
                _ => {}
            }
        }
    }

    /// Writes the threads and processes into `archive`, before its
    /// `FINISHED_INIT`.
    fn write(&self, archive: &mut ArchiveWriter, sideband_id: u64) {
        let mut tids: Vec<&u32> = self.threads.keys().collect();
        tids.sort_unstable();
        for tid in tids {
            let t = &self.threads[tid];
            let namespaces = t.namespaces.as_ref().map(|(ns, time)| (ns, *time));
            archive.synthesize_thread(&ThreadAtStart { pid: t.pid, tid: *tid, comm: &t.comm, time: t.time, namespaces }, sideband_id);
        }
        let mut pids: Vec<&u32> = self.processes.keys().collect();
        pids.sort_unstable();
        for pid in pids {
            archive.copy(&self.processes[pid], None);
        }
    }
}

/// A dump asked for and not yet closed.
struct OpenDump {
    request: DumpRequest,
    /// Requests that came while it was open and share it (a continuous
    /// archive's cuts only).
    joined: Vec<DumpRequest>,
}

/// The recorder-side ring: the rounds of the last seconds, what the
/// threads were at its start, and the dumps being closed.
pub(crate) struct FlightWindow {
    options: FlightOptions,
    rounds: VecDeque<Arc<Chunk>>,
    /// The round being read.
    current: Vec<u8>,
    start: WindowStart,
    descriptions: Descriptions,
    /// Bytes of rounds held by the window or by dumps being written.
    alive: Arc<AtomicUsize>,
    tracefs: PathBuf,
    cpus: u32,
    /// The sideband event id that synthesized records carry.
    sideband_id: u64,
    /// The dumps asked for and not yet closed, in the order asked. More
    /// than one can be open: under load, the triggers of two dumps can
    /// reach the window back to back, before the first one's `after` is up.
    open: VecDeque<OpenDump>,
    /// When the current file of a continuous archive began.
    file_start_ns: u64,
    /// When the drain began reading the round being read: every record
    /// older than this was in a ring by then, so it is in this round or
    /// an earlier one. None until a round says when it began.
    round_began_ns: Option<u64>,
}

impl FlightWindow {
    pub(crate) fn new(options: FlightOptions, descriptions: Descriptions, tracefs: PathBuf, cpus: u32, sideband_id: u64) -> FlightWindow {
        FlightWindow {
            options,
            rounds: VecDeque::new(),
            current: Vec::with_capacity(1 << 16),
            start: WindowStart::default(),
            descriptions,
            alive: Arc::default(),
            tracefs,
            cpus,
            sideband_id,
            open: VecDeque::new(),
            file_start_ns: crate::sys::monotonic_ns(),
            round_began_ns: None,
        }
    }

    pub(crate) fn descriptions(&mut self) -> &mut Descriptions {
        &mut self.descriptions
    }

    pub(crate) fn seed(&mut self, thread: &ThreadAtStart<'_>) {
        self.start.seed(thread);
    }

    /// The drain begins reading a round at `now_ns`.
    pub(crate) fn begin_round(&mut self, now_ns: u64) {
        self.round_began_ns = Some(now_ns);
    }

    /// A record as the ring gave it, or a description written before one.
    pub(crate) fn copy(&mut self, bytes: &[u8]) {
        self.current.extend_from_slice(bytes);
    }

    /// Asks for a dump. In a window, every request is a dump of its own:
    /// which triggers share a dump is the asker's choice, made before it
    /// asks (`usertrace record`'s gate), so a second dump asked for before
    /// the first one closed is a second file, not a part of the first. In
    /// a continuous archive, a cut asked for while one is pending is that
    /// same cut.
    pub(crate) fn request(&mut self, request: DumpRequest) {
        match self.open.back_mut() {
            Some(open) if self.options.switch.is_some() => open.joined.push(request),
            _ => self.open.push_back(OpenDump { request, joined: Vec::new() }),
        }
    }

    /// Ends the round read at `now_ns`: keeps it, lets go what is too old
    /// or too much, and returns the dumps whose time after their trigger
    /// is up (every open one, when `closing`), in the order asked.
    pub(crate) fn end_round(&mut self, now_ns: u64, closing: bool) -> Vec<FlightDump> {
        if let Some(switch) = self.options.switch {
            return self.end_round_switching(switch, now_ns, closing).into_iter().collect();
        }
        let bytes = std::mem::replace(&mut self.current, Vec::with_capacity(1 << 16));
        let incoming = bytes.len();
        self.let_go(self.oldest_needed(now_ns), incoming);
        if !bytes.is_empty() {
            // Counted as allocated: a vector grown by doubling may hold
            // twice what it has.
            let mut bytes = bytes;
            bytes.shrink_to_fit();
            // ATOMICS: Relaxed, as in Chunk::drop.
            self.alive.fetch_add(bytes.capacity(), Ordering::Relaxed);
            self.rounds.push_back(Arc::new(Chunk { bytes, read_ns: now_ns, alive: self.alive.clone() }));
        }
        let after_ns = self.options.after.as_nanos() as u64;
        let mut closed = Vec::new();
        // Oldest trigger first: each open dump is due on its own.
        while let Some(at) = self.open.iter().position(|open| closing || open.request.time_ns + after_ns <= now_ns) {
            let open = self.open.remove(at).expect("position is in range");
            closed.push(self.close(open));
        }
        closed
    }

    /// The earliest time any round still kept must reach: the keep before
    /// the window's end, and before each open dump's trigger however late
    /// the round that closes it comes.
    fn oldest_needed(&self, now_ns: u64) -> u64 {
        let window_end = now_ns.saturating_sub(self.options.after.as_nanos() as u64);
        let earliest = self.open.iter().map(|open| open.request.time_ns).fold(window_end, u64::min);
        earliest.saturating_sub(self.options.keep.as_nanos() as u64)
    }

    /// Lets go, oldest first, the rounds read before `window_start` (they
    /// hold only older records) and those past the byte cap with
    /// `incoming` more, folding what they said into the window's start.
    fn let_go(&mut self, window_start: u64, incoming: usize) {
        while let Some(oldest) = self.rounds.front() {
            let too_old = oldest.read_ns < window_start;
            // ATOMICS: Relaxed, as in Chunk::drop.
            let too_much = self.alive.load(Ordering::Relaxed) + incoming > self.options.max_bytes;
            if !too_old && !too_much {
                break;
            }
            let oldest = self.rounds.pop_front().expect("front was Some");
            self.start.fold(&oldest.bytes);
        }
    }

    /// The dump of `open`: the kept rounds from the keep before its
    /// trigger on, and the threads as they were where those begin. Rounds
    /// older than that, kept for a dump with an earlier trigger, are
    /// folded into this dump's start instead.
    fn close(&self, open: OpenDump) -> FlightDump {
        let from = open.request.time_ns.saturating_sub(self.options.keep.as_nanos() as u64);
        let mut start = self.start.clone();
        let mut rounds = Vec::with_capacity(self.rounds.len());
        for round in &self.rounds {
            if round.read_ns < from {
                start.fold(&round.bytes);
            } else {
                rounds.push(round.clone());
            }
        }
        let named_ns = open.request.time_ns;
        self.dump(open.request, open.joined, rounds, start, named_ns)
    }

    /// A continuous archive's round: kept until its file switches, then
    /// handed over with the rest of that file, whose start is the state the
    /// files before it ended in.
    fn end_round_switching(&mut self, switch: Switch, now_ns: u64, closing: bool) -> Option<FlightDump> {
        let mut bytes = std::mem::replace(&mut self.current, Vec::with_capacity(1 << 16));
        if !bytes.is_empty() {
            bytes.shrink_to_fit();
            self.alive.fetch_add(bytes.capacity(), Ordering::Relaxed);
            self.rounds.push_back(Arc::new(Chunk { bytes, read_ns: now_ns, alive: self.alive.clone() }));
        }
        // This file's own records: the file before it may still be being
        // written, and both must fit under the cap.
        let held: usize = self.rounds.iter().map(|r| r.bytes.capacity()).sum();
        let due = closing
            || !self.open.is_empty()
            || held >= self.options.max_bytes / 2
            || match switch {
                Switch::Size(size) => held >= size,
                Switch::Every(every) => now_ns.saturating_sub(self.file_start_ns) >= every.as_nanos() as u64,
                Switch::Asked => false,
            };
        if !due || self.rounds.is_empty() {
            return None;
        }
        let (request, joined) = self.open.pop_front().map(|open| (open.request, open.joined)).unwrap_or_else(|| {
            let reason = match switch {
                _ if closing => "the end of the recording",
                Switch::Size(size) if held < size => "--max-size",
                Switch::Every(every) if now_ns.saturating_sub(self.file_start_ns) < every.as_nanos() as u64 => "--max-size",
                Switch::Asked => "--max-size",
                _ => "--switch-output",
            };
            (DumpRequest { reason: reason.into(), time_ns: now_ns, token: 0 }, Vec::new())
        });
        self.file_start_ns = now_ns;
        // A round is no cut in time: the rings are read one after another,
        // and a record written to one CPU's ring after it was read but
        // before another's was waits for the next round. The file ends
        // where this round's read began, so that files follow each other
        // in time; what is newer goes on in the next file.
        let carried = self.round_began_ns.filter(|_| !closing).and_then(|cut| self.split_newest(cut));
        let start = self.start.clone();
        let rounds: Vec<Arc<Chunk>> = self.rounds.drain(..).collect();
        for round in &rounds {
            self.start.fold(&round.bytes);
        }
        self.rounds.extend(carried);
        Some(self.dump(request, joined, rounds, start, now_ns))
    }

    /// Splits the newest round at `cut_ns`: its records older than that
    /// stay; the rest is returned, as a round of its own (None if none).
    /// A record whose time cannot be read stays.
    fn split_newest(&mut self, cut_ns: u64) -> Option<Arc<Chunk>> {
        let newest = self.rounds.back()?;
        let newer = |record: &[u8]| parse(record).ok().and_then(|r| r.time()).is_some_and(|t| t >= cut_ns);
        if !back_to_back(&newest.bytes).any(newer) {
            return None;
        }
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for record in back_to_back(&newest.bytes) {
            if newer(record) { &mut after } else { &mut before }.extend_from_slice(record);
        }
        let read_ns = newest.read_ns;
        self.rounds.pop_back();
        let chunk = |bytes: Vec<u8>| {
            // ATOMICS: Relaxed, as in Chunk::drop.
            self.alive.fetch_add(bytes.capacity(), Ordering::Relaxed);
            Arc::new(Chunk { bytes, read_ns, alive: self.alive.clone() })
        };
        if !before.is_empty() {
            let kept = chunk(before);
            self.rounds.push_back(kept);
        }
        Some(chunk(after))
    }

    fn dump(&self, request: DumpRequest, joined: Vec<DumpRequest>, rounds: Vec<Arc<Chunk>>, start: WindowStart, named_ns: u64) -> FlightDump {
        FlightDump {
            request,
            named_ns,
            joined,
            rounds,
            start,
            descriptions: self.descriptions.clone(),
            tracefs: self.tracefs.clone(),
            cpus: self.cpus,
            sideband_id: self.sideband_id,
        }
    }
}

/// A flight recorder's window once the drain thread has stopped: the
/// rings are read for the last time, but the triggers in what the session
/// still releases (the last round's events) may ask for dumps, and every
/// dump asked for is written. Closing it closes every open dump (and a
/// continuous archive's last file).
pub(crate) struct FlightEnd {
    window: Box<FlightWindow>,
    dumps: Sender<FlightDump>,
}

impl FlightEnd {
    pub(crate) fn new(window: Box<FlightWindow>, dumps: Sender<FlightDump>) -> FlightEnd {
        FlightEnd { window, dumps }
    }

    /// Asks for one more dump, as [`FlightWindow::request`].
    pub(crate) fn request(&mut self, request: DumpRequest) {
        self.window.request(request);
    }

    /// Closes every open dump and hands each to the writer; dropping the
    /// sender then tells the writer there are no more.
    pub(crate) fn close(mut self) {
        for dump in self.window.end_round(crate::sys::monotonic_ns(), true) {
            // The writer is gone only if the recorder is: nobody to tell.
            let _ = self.dumps.send(dump);
        }
    }
}

/// A closed window, ready to be written as a perf.data file: what the
/// recorder kept when the dump's time after its trigger ran out.
pub struct FlightDump {
    request: DumpRequest,
    /// See [`FlightDump::named_ns`].
    named_ns: u64,
    joined: Vec<DumpRequest>,
    rounds: Vec<Arc<Chunk>>,
    start: WindowStart,
    descriptions: Descriptions,
    tracefs: PathBuf,
    cpus: u32,
    sideband_id: u64,
}

/// What a written dump holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DumpSummary {
    /// The first and last event times in it (CLOCK_MONOTONIC ns).
    pub window: Option<(u64, u64)>,
    /// Events in it.
    pub events: u64,
    /// Events the rings lost inside its window (LOST records in it).
    pub lost: u64,
}

impl FlightDump {
    /// What asked for this dump.
    pub fn request(&self) -> &DumpRequest {
        &self.request
    }

    /// The time its file is named after (CLOCK_MONOTONIC ns): when it was
    /// asked for, or in a continuous archive when it was cut. Each file of
    /// a continuous archive begins where the one before it ended, so named
    /// by its cut their names sort as their contents do, even when a
    /// request (a SIGUSR2) reaches the window only after a later cut.
    pub fn named_ns(&self) -> u64 {
        self.named_ns
    }

    /// Requests that came while it was open, and share it.
    pub fn joined(&self) -> &[DumpRequest] {
        &self.joined
    }

    /// Writes the dump as perf.data to `options.path` (a new regular
    /// file), letting each round's memory go once written.
    pub fn write(self, options: &ArchiveOptions) -> Result<DumpSummary, Error> {
        let mut archive = ArchiveWriter::create(options, &self.tracefs, self.cpus)?;
        archive.describe_all(&self.descriptions);
        self.start.write(&mut archive, self.sideband_id);
        archive.finish_init()?;
        let mut summary = DumpSummary::default();
        for chunk in self.rounds {
            count(&chunk.bytes, &mut summary);
            archive.copy_round(&chunk.bytes);
            archive.end_round()?;
        }
        let (first, last) = summary.window.unwrap_or((self.request.time_ns, self.request.time_ns));
        let mut reasons = vec![self.request.reason.as_str()];
        reasons.extend(self.joined.iter().map(|r| r.reason.as_str()));
        archive.dump_record(self.request.time_ns, &reasons.join("; "), first, last, summary.lost);
        archive.finish()?;
        Ok(summary)
    }
}

/// Adds a round's events, their times and the losses in it to `summary`.
fn count(bytes: &[u8], summary: &mut DumpSummary) {
    for record in back_to_back(bytes) {
        match parse(record) {
            Ok(Record::Sample { sample, .. }) if sample.id != crate::archive::PROCESS_PERF_ID => {
                summary.events += 1;
                let (first, last) = summary.window.get_or_insert((sample.time, sample.time));
                *first = (*first).min(sample.time);
                *last = (*last).max(sample.time);
            }
            Ok(Record::Lost { lost, .. }) => summary.lost += lost,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::process_sample;
    use crate::processes::ProcessInfo;
    use crate::record::{HEADER_LEN, PERF_RECORD_COMM, PERF_RECORD_EXIT, PERF_RECORD_FORK};

    const MS: u64 = 1_000_000;

    /// A sideband record of `kind` with `body`, and the sample_id trailer.
    fn side(kind: u32, body: &[u8], pid: u32, tid: u32, time: u64) -> Vec<u8> {
        let size = HEADER_LEN + body.len() + 32;
        let mut r = Vec::with_capacity(size);
        r.extend_from_slice(&kind.to_ne_bytes());
        r.extend_from_slice(&0u16.to_ne_bytes());
        r.extend_from_slice(&(size as u16).to_ne_bytes());
        r.extend_from_slice(body);
        for v in [pid, tid] {
            r.extend_from_slice(&v.to_ne_bytes());
        }
        r.extend_from_slice(&time.to_ne_bytes());
        r.extend_from_slice(&[0; 16]);
        r
    }

    fn comm(pid: u32, tid: u32, name: &str, time: u64) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&pid.to_ne_bytes());
        body.extend_from_slice(&tid.to_ne_bytes());
        body.extend_from_slice(name.as_bytes());
        body.resize((body.len() + 1).next_multiple_of(8), 0);
        side(PERF_RECORD_COMM, &body, pid, tid, time)
    }

    /// FORK or EXIT: pid, ppid, tid, ptid, time.
    fn task(kind: u32, pid: u32, ppid: u32, tid: u32, ptid: u32, time: u64) -> Vec<u8> {
        let mut body = Vec::new();
        for v in [pid, ppid, tid, ptid] {
            body.extend_from_slice(&v.to_ne_bytes());
        }
        body.extend_from_slice(&time.to_ne_bytes());
        side(kind, &body, pid, tid, time)
    }

    /// An event sample of perf id 7 at `time`.
    fn event(pid: u32, time: u64) -> Vec<u8> {
        crate::archive::sample_record_for_tests(7, pid, time)
    }

    fn window(keep_ms: u64, after_ms: u64, max_bytes: usize, switch: Option<Switch>) -> FlightWindow {
        let options = FlightOptions { keep: Duration::from_millis(keep_ms), max_bytes, after: Duration::from_millis(after_ms), switch };
        FlightWindow::new(options, Descriptions::default(), PathBuf::from("/nonexistent"), 1, 1)
    }

    fn times(dump: &FlightDump) -> Vec<u64> {
        dump.rounds.iter().map(|c| c.read_ns).collect()
    }

    #[test]
    fn rounds_older_than_the_window_go_and_a_dump_closes_after_its_trigger() {
        let mut w = window(100, 20, usize::MAX, None);
        for t in (0..=300).step_by(10) {
            w.copy(&event(1, t * MS));
            assert!(w.end_round(t * MS, false).is_empty());
        }
        // Rounds read before 300 - 20 - 100 ms have gone.
        assert_eq!(w.rounds.front().unwrap().read_ns, 180 * MS);
        w.request(DumpRequest { reason: "test".into(), time_ns: 305 * MS, token: 1 });
        w.copy(&event(1, 310 * MS));
        assert!(w.end_round(310 * MS, false).is_empty(), "not before trigger + after");
        // A late round closes it: the window is still the keep before the
        // trigger, not before now.
        w.copy(&event(1, 360 * MS));
        let dump = w.end_round(360 * MS, false).pop().expect("due");
        assert_eq!(times(&dump).first(), Some(&(210 * MS)), "from trigger - keep (305 - 100 ms), by whole rounds");
        assert_eq!(times(&dump).last(), Some(&(360 * MS)));
        assert_eq!(dump.request().reason, "test");
    }

    #[test]
    fn the_byte_cap_wins_over_the_time_and_counts_what_dumps_hold() {
        let one = event(1, 0).len();
        let mut w = window(60_000, 0, 10 * one, None);
        for t in 0..20 {
            w.copy(&event(1, t * MS));
            w.end_round(t * MS, false);
        }
        assert_eq!(w.rounds.len(), 10, "ten rounds of one event fit the cap");
        w.request(DumpRequest { reason: "held".into(), time_ns: 19 * MS, token: 1 });
        let dump = w.end_round(20 * MS, false).pop().expect("after 0: due at once");
        // While the dump holds its rounds, new ones make the window shorter
        // rather than the memory larger.
        for t in 21..26 {
            w.copy(&event(1, t * MS));
            w.end_round(t * MS, false);
        }
        assert!(w.alive.load(Ordering::Relaxed) <= 10 * one.next_multiple_of(8) + one, "{}", w.alive.load(Ordering::Relaxed));
        drop(dump);
        assert_eq!(w.alive.load(Ordering::Relaxed), w.rounds.iter().map(|c| c.bytes.capacity()).sum::<usize>());
    }

    #[test]
    fn what_leaves_the_window_is_folded_into_the_threads_at_its_start() {
        let mut w = window(10, 0, usize::MAX, None);
        w.seed(&ThreadAtStart { pid: 5, tid: 5, comm: "server", time: 0, namespaces: None });
        let info = ProcessInfo { executable: Some("/usr/bin/server".into()), ..ProcessInfo::default() };
        for record in [
            process_sample(5, 1, 0, &info),
            task(PERF_RECORD_FORK, 5, 1, 6, 5, 2),
            comm(5, 6, "worker", 3),
            task(PERF_RECORD_FORK, 9, 1, 9, 9, 4),
            task(PERF_RECORD_EXIT, 9, 1, 9, 9, 5),
        ] {
            w.copy(&record);
        }
        w.end_round(MS, false);
        // Far later: that round leaves the window.
        w.copy(&event(5, 100 * MS));
        w.end_round(100 * MS, false);
        let start = &w.start;
        assert_eq!(start.threads[&5].comm, "server");
        assert_eq!((start.threads[&6].pid, start.threads[&6].comm.as_str()), (5, "worker"), "a forked thread, renamed");
        assert!(!start.threads.contains_key(&9), "an exited one is gone");
        assert!(start.processes.contains_key(&5), "the description stays for the next dump");
    }

    #[test]
    fn a_continuous_archive_puts_every_round_in_exactly_one_file() {
        let mut w = window(0, 0, usize::MAX, Some(Switch::Every(Duration::from_millis(50))));
        w.file_start_ns = 0;
        let mut files = Vec::new();
        for t in (10..=200).step_by(10) {
            w.copy(&event(1, t * MS));
            files.extend(w.end_round(t * MS, false));
        }
        w.request(DumpRequest { reason: "SIGUSR2".into(), time_ns: 205 * MS, token: 1 });
        w.copy(&event(1, 205 * MS));
        files.extend(w.end_round(205 * MS, false));
        w.copy(&event(1, 210 * MS));
        files.extend(w.end_round(210 * MS, true));
        let all: Vec<u64> = files.iter().flat_map(times).collect();
        let want: Vec<u64> = (10..=200).step_by(10).chain([205, 210]).map(|t| t * MS).collect();
        assert_eq!(all, want, "every round once, in order");
        assert_eq!(times(&files[0]), [10, 20, 30, 40, 50].map(|t| t * MS));
        let reasons: Vec<&str> = files.iter().map(|f| f.request().reason.as_str()).collect();
        assert_eq!(reasons.last(), Some(&"the end of the recording"));
        assert_eq!(reasons[reasons.len() - 2], "SIGUSR2");
    }

    #[test]
    fn a_continuous_archive_names_each_file_by_its_cut_so_names_sort_as_contents_do() {
        let mut w = window(0, 0, usize::MAX, Some(Switch::Every(Duration::from_millis(50))));
        w.file_start_ns = 0;
        let mut files = Vec::new();
        for t in (10..=50).step_by(10) {
            w.copy(&event(1, t * MS));
            files.extend(w.end_round(t * MS, false));
        }
        // A SIGUSR2 asked at 45 ms reaches the window only after the cut
        // at 50 ms (the session's thread was late): its file, cut at 60 ms,
        // holds what came after 50 ms and must sort after that one.
        w.request(DumpRequest { reason: "SIGUSR2".into(), time_ns: 45 * MS, token: 1 });
        w.copy(&event(1, 60 * MS));
        files.extend(w.end_round(60 * MS, false));
        let named: Vec<(u64, &str)> = files.iter().map(|f| (f.named_ns() / MS, f.request().reason.as_str())).collect();
        assert_eq!(named, [(50, "--switch-output"), (60, "SIGUSR2")]);
        // A flight recorder's dump is named when it was asked for.
        let mut w = window(10 * MS, 0, usize::MAX, None);
        w.copy(&event(1, 5 * MS));
        w.end_round(5 * MS, false);
        w.request(DumpRequest { reason: "trigger".into(), time_ns: 7 * MS, token: 1 });
        let dump = w.end_round(8 * MS, false).pop().expect("a dump with nothing after it to wait for");
        assert_eq!(dump.named_ns(), 7 * MS);
    }

    #[test]
    fn a_continuous_archive_ends_a_file_early_when_its_records_reach_the_memory_cap() {
        let round = event(1, 0).len();
        // Files of 10 s each, but at most six rounds in memory: three per
        // file, as the one before may still be being written.
        let mut w = window(0, 0, 6 * round, Some(Switch::Every(Duration::from_secs(10))));
        w.file_start_ns = 0;
        let mut files = Vec::new();
        for t in 1..=7 {
            w.copy(&event(1, t * MS));
            files.extend(w.end_round(t * MS, false));
        }
        files.extend(w.end_round(8 * MS, true));
        let rounds: Vec<Vec<u64>> = files.iter().map(|f| times(f).iter().map(|t| t / MS).collect()).collect();
        assert_eq!(rounds, [vec![1, 2, 3], vec![4, 5, 6], vec![7]]);
        let reasons: Vec<&str> = files.iter().map(|f| f.request().reason.as_str()).collect();
        assert_eq!(reasons, ["--max-size", "--max-size", "the end of the recording"]);
    }

    /// Issue 42: under load the triggers of two dumps reach the window
    /// back to back, before the first one's `after` is up. Each is a dump
    /// of its own, with its own window; the second was once folded into
    /// the first and never written.
    #[test]
    fn two_dumps_asked_back_to_back_are_two_dumps_each_with_its_own_window() {
        let mut w = window(50, 20, usize::MAX, None);
        for t in (10..=230).step_by(10) {
            w.copy(&event(1, t * MS));
            assert!(w.end_round(t * MS, false).is_empty());
        }
        w.request(DumpRequest { reason: "first".into(), time_ns: 200 * MS, token: 1 });
        w.request(DumpRequest { reason: "second".into(), time_ns: 225 * MS, token: 2 });
        w.copy(&event(1, 250 * MS));
        let dumps = w.end_round(250 * MS, false);
        let said: Vec<(&str, u64, u64)> = dumps
            .iter()
            .map(|d| (d.request().reason.as_str(), times(d)[0] / MS, *times(d).last().unwrap() / MS))
            .collect();
        // Rounds read from 160 ms on were still kept; the second dump's
        // window begins at 175 ms, so its first round is 180 ms.
        assert_eq!(said, [("first", 160, 250), ("second", 180, 250)], "each from the keep before its own trigger");
        assert!(dumps.iter().all(|d| d.joined().is_empty()));
        assert!(w.end_round(260 * MS, false).is_empty(), "both closed, once each");
    }

    #[test]
    fn open_dumps_close_each_when_its_own_after_is_up() {
        let mut w = window(50, 20, usize::MAX, None);
        w.request(DumpRequest { reason: "first".into(), time_ns: 100 * MS, token: 1 });
        w.request(DumpRequest { reason: "second".into(), time_ns: 115 * MS, token: 2 });
        w.copy(&event(1, 100 * MS));
        let first = w.end_round(125 * MS, false);
        assert_eq!(first.iter().map(|d| d.request().token).collect::<Vec<_>>(), [1]);
        let second = w.end_round(135 * MS, false);
        assert_eq!(second.iter().map(|d| d.request().token).collect::<Vec<_>>(), [2]);
    }

    /// A trigger followed by silence: no record comes, yet the drain's
    /// rounds (one at least every 50 ms, empty or not) close the dump.
    #[test]
    fn a_dump_closes_in_a_round_with_no_records() {
        let mut w = window(100, 20, usize::MAX, None);
        w.copy(&event(1, 10 * MS));
        assert!(w.end_round(10 * MS, false).is_empty());
        w.request(DumpRequest { reason: "then silence".into(), time_ns: 12 * MS, token: 1 });
        assert!(w.end_round(20 * MS, false).is_empty());
        let dump = w.end_round(80 * MS, false).pop().expect("closed by an empty round");
        assert_eq!(times(&dump), [10 * MS]);
    }

    #[test]
    fn closing_closes_every_open_dump() {
        let mut w = window(100, 60_000, usize::MAX, None);
        w.copy(&event(1, 10 * MS));
        w.end_round(10 * MS, false);
        for (token, at) in [(1, 11), (2, 12), (3, 13)] {
            w.request(DumpRequest { reason: format!("t{token}"), time_ns: at * MS, token });
        }
        assert!(w.end_round(20 * MS, false).is_empty(), "a minute after each trigger is far off");
        let closed = w.end_round(30 * MS, true);
        assert_eq!(closed.iter().map(|d| d.request().token).collect::<Vec<_>>(), [1, 2, 3]);
    }

    /// A round read while the rings fill: records of times on both sides
    /// of when its read began. A file cut at that round ends there, and
    /// the next file begins there, so that files follow each other in time
    /// (the guest's switch-output test saw two files overlap by 140 ms).
    #[test]
    fn a_continuous_archive_cuts_a_file_where_the_last_rounds_read_began() {
        let mut w = window(0, 0, usize::MAX, Some(Switch::Every(Duration::from_millis(50))));
        w.file_start_ns = 0;
        w.begin_round(10 * MS);
        w.copy(&event(1, 5 * MS));
        assert!(w.end_round(12 * MS, false).is_empty());
        // Read from 60 ms on: 58 ms was in a ring by then, 61 ms came
        // while the other rings were read.
        w.begin_round(60 * MS);
        for t in [58, 61, 59, 62] {
            w.copy(&event(1, t * MS));
        }
        let first = w.end_round(63 * MS, false).pop().expect("50 ms are up");
        w.begin_round(70 * MS);
        w.copy(&event(1, 66 * MS));
        let last = w.end_round(71 * MS, true).pop().expect("closing");
        let numbers = |dump: &FlightDump| -> Vec<u64> {
            dump.rounds.iter().flat_map(|c| back_to_back(&c.bytes).map(|r| parse(r).unwrap().time().unwrap() / MS).collect::<Vec<_>>()).collect()
        };
        assert_eq!(numbers(&first), [5, 58, 59]);
        assert_eq!(numbers(&last), [61, 62, 66]);
        drop((first, last));
        assert_eq!(w.alive.load(Ordering::Relaxed), 0, "every split round counted and let go");
    }
}

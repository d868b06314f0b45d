//! Reading a perf.data file back as the session's outputs: ours, one from
//! `perf record -e 'user_events:...'`, or one that Microsoft's tools wrote.
//!
//! The file's records go through the same attribution as a live session's
//! ring records, round by round (`FINISHED_ROUND`), so that our own
//! archive yields what the session yielded while recording it. Records
//! before `FINISHED_INIT` are the threads that existed at the start, as
//! `perf record` (and our recorder) synthesize them from `/proc`.
//!
//! Only what `tracepoint_perf` parses is trusted: a record's sample fields
//! come from its reader, with the file's own sample layout, and the bodies
//! of task records are read with bounds checks. A file that lies about its
//! sizes ends in an error naming it, never a panic: each call into
//! `tracepoint_perf` is made through [`guarded`], which turns a panic of
//! its parsers into [`ArchiveError::Broken`].

use crate::bytes::{u32_at, u64_at};
use std::cell::Cell;
use std::fmt;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use tracepoint_decode::{PerfEventAttrSampleType, PerfEventDesc, PerfEventHeaderType};
use tracepoint_perf::{PerfDataFileEventOrder, PerfDataFileReader, PerfHeaderIndex};

use super::{format as process_format, SIDEBAND_NAME};
use crate::attribution::{Attribution, Fallback, Mapped, Pending};
use crate::processes::ProcessInfo;
use crate::format::EventFormat;
use crate::namespaces::Namespaces;
use crate::record::{Callchain, PERF_RECORD_MISC_COMM_EXEC};
use crate::session::Output;
use crate::threads::ThreadTable;

/// Why a perf.data file could not be read (to its end).
#[derive(Debug)]
pub enum ArchiveError {
    /// It could not be opened or read.
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// It is not a perf.data file.
    NotPerfData {
        /// The file.
        path: PathBuf,
    },
    /// Its header was never written: the recorder did not finish it.
    Unfinished {
        /// The file.
        path: PathBuf,
    },
    /// It is perf.data, but broken after its first `records` records;
    /// nothing after them can be read.
    Broken {
        /// The file.
        path: PathBuf,
        /// The records read before the one that could not be.
        records: u64,
        /// What was wrong.
        source: io::Error,
    },
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveError::Io { path, source } => write!(f, "{}: cannot read it: {source}", path.display()),
            ArchiveError::NotPerfData { path } => write!(f, "{}: not a perf.data file (it does not start with PERFILE2)", path.display()),
            ArchiveError::Unfinished { path } => write!(
                f,
                "{}: an incomplete perf.data file: its recorder never wrote its header (killed before it finished?), \
                 so its events cannot be decoded",
                path.display()
            ),
            ArchiveError::Broken { path, records, source } => write!(
                f,
                "{}: the perf.data file is broken after its first {records} records ({source}): it is cut short \
                 or its sizes are wrong, and nothing after that point can be read",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ArchiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ArchiveError::Io { source, .. } | ArchiveError::Broken { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What perf.data files start with.
const MAGIC: &[u8; 8] = b"PERFILE2";

/// A perf.data file, read round by round as a session's outputs.
pub struct ArchiveReader {
    file: PerfDataFileReader,
    path: PathBuf,
    attribution: Attribution,
    /// Samples of these perf ids are of these tracepoints; `None` for an
    /// id whose event is no tracepoint we decode.
    formats: FxHashMap<u64, Option<Arc<EventFormat>>>,
    /// The `usertrace:process` descriptions read and not yet taken, by
    /// pid: each goes with the next sample or exec COMM of its process,
    /// the record the recorder wrote it before.
    descriptions: FxHashMap<u32, ProcessInfo>,
    /// Perf ids of `usertrace:process` samples.
    process_ids: FxHashSet<u64>,
    /// Perf ids of the events whose ring holds task records (their LOST
    /// are sideband losses).
    sideband_ids: FxHashSet<u64>,
    /// Records up to `FINISHED_INIT` are the threads at the start.
    initialized: bool,
    clock: Option<(u64, u64)>,
    finished: bool,
    /// Records read so far, for the message of a file broken after them.
    records: u64,
    /// How far into the file the records read so far reach: see
    /// [`ArchiveReader::position`].
    position: u64,
    /// What a file without `usertrace:process` descriptions (one of `perf
    /// record`'s) says of its processes' executables: see [`Executables`].
    executables: Executables,
}

/// The executables of a file that describes no process (`perf record`'s):
/// each process's first executable mapping since its exec or since the
/// start, as perf records (and synthesizes) its mappings. They go to the
/// attribution as `Pending::Program`, which takes them in time order: a
/// forked child's first event may come before its FORK in the file (from
/// another CPU's ring), and only in time order does the child run its
/// parent's program, not the first library it maps.
#[derive(Default)]
struct Executables {
    /// Whether the file describes its processes itself (ours): then none
    /// of this applies.
    described: bool,
    /// Processes that have exec'd and whose new executable has not been
    /// mapped yet: their exec COMM (time, tid, name), held until it is, as
    /// the kernel announces an exec before it maps the new program.
    held: FxHashMap<u32, (u64, u32, String)>,
}

impl ArchiveReader {
    /// Whether `path` starts as a perf.data file does, or as one whose
    /// recorder never finished it (zeros where the magic goes): no text
    /// file starts with either, so a file is told by its bytes, whatever
    /// its name.
    pub fn recognizes(path: &Path) -> bool {
        let mut start = [0u8; 8];
        match std::fs::File::open(path).and_then(|mut f| io::Read::read_exact(&mut f, &mut start)) {
            Ok(()) => &start == MAGIC || start == [0; 8],
            Err(_) => false,
        }
    }

    /// Opens `path` and reads its headers.
    pub fn open(path: &Path) -> Result<ArchiveReader, ArchiveError> {
        let io_error = |source| ArchiveError::Io { path: path.to_owned(), source };
        let mut start = [0u8; 16];
        let mut file = std::fs::File::open(path).map_err(io_error)?;
        let got = read_up_to(&mut file, &mut start).map_err(io_error)?;
        if got >= 8 && start[..8] == [0; 8] {
            return Err(ArchiveError::Unfinished { path: path.to_owned() });
        }
        if got < 8 || &start[..8] != MAGIC {
            return Err(ArchiveError::NotPerfData { path: path.to_owned() });
        }
        let name = path.to_str().ok_or_else(|| io_error(io::Error::new(io::ErrorKind::InvalidInput, "the path is not UTF-8")))?;
        let mut reader = PerfDataFileReader::new();
        guarded(|| reader.open_file(name, PerfDataFileEventOrder::File))
            .and_then(|opened| opened)
            .map_err(|source| ArchiveError::Broken { path: path.to_owned(), records: 0, source })?;
        if reader.byte_reader().byte_swap_needed() {
            let source = io::Error::new(io::ErrorKind::Unsupported, "it was written on a machine of the other byte order");
            return Err(ArchiveError::Broken { path: path.to_owned(), records: 0, source });
        }
        let clock = clock_data(reader.header(PerfHeaderIndex::ClockData));
        let position = reader.data_begin_file_pos();
        let mut sideband_ids = FxHashSet::default();
        let mut process_ids = FxHashSet::default();
        for desc in reader.event_desc_list() {
            let set = match desc.name() {
                SIDEBAND_NAME => &mut sideband_ids,
                name if name == process_name() => &mut process_ids,
                _ => continue,
            };
            set.extend(desc.ids().iter().copied());
        }
        let described = !process_ids.is_empty();
        // Stacks are named only in a file that has some.
        let stacks = reader.event_desc_list().iter().any(|d| d.attr().sample_type.has_flag(PerfEventAttrSampleType::Callchain));
        let mut attribution = Attribution::new(ThreadTable::new(), Fallback::Nothing);
        if stacks {
            attribution.name_stacks();
        }
        Ok(ArchiveReader {
            file: reader,
            path: path.to_owned(),
            attribution,
            descriptions: FxHashMap::default(),
            formats: FxHashMap::default(),
            process_ids,
            sideband_ids,
            initialized: false,
            executables: Executables { described, ..Executables::default() },
            clock,
            finished: false,
            records: 0,
            position,
        })
    }

    /// CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds at one instant, as
    /// the file's CLOCK_DATA says, when it has one for CLOCK_MONOTONIC.
    pub fn clock(&self) -> Option<(u64, u64)> {
        self.clock
    }

    /// Events released so far.
    pub fn events(&self) -> u64 {
        self.attribution.events
    }

    /// How far into the file reading has come, in bytes: the start of its
    /// records and the size of each one read since, as they lie in the
    /// file one after another. For progress against the file's size: the
    /// headers and tables after the records are read when it is opened.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The outputs of the next round, in time order; None after the last.
    /// After an error the rest of the file cannot be read, and what was
    /// released before it has been returned.
    pub fn next_round(&mut self) -> Result<Option<Vec<Output>>, ArchiveError> {
        if self.finished {
            return Ok(None);
        }
        let mut out = Vec::new();
        loop {
            // After a panic the reader's state is unknown: nothing more is
            // read from it.
            match guarded(|| self.file.move_next_event()).and_then(|moved| moved) {
                Ok(true) => self.records += 1,
                Ok(false) => {
                    self.finished = true;
                    self.release_held_execs();
                    self.attribution.flush(&mut |o| out.push(o));
                    return Ok(Some(out));
                }
                Err(source) => return Err(self.broken(source)),
            }
            let event = match guarded(|| self.file.current_event()) {
                Ok(event) => event,
                Err(source) => return Err(self.broken(source)),
            };
            self.position += u64::from(event.header.size);
            match event.header.ty {
                PerfEventHeaderType::FinishedRound => {
                    self.release_held_execs();
                    self.attribution.end_round(&mut |o| out.push(o));
                    return Ok(Some(out));
                }
                PerfEventHeaderType::FinishedInit => self.initialized = true,
                PerfEventHeaderType::Sample => {
                    let info = match guarded(|| self.file.get_sample_event_info(&event)) {
                        Ok(Ok(info)) => info,
                        Ok(Err(_)) => continue,
                        Err(source) => return Err(self.broken(source)),
                    };
                    let raw = info.raw_data();
                    if self.process_ids.contains(&info.id) {
                        let format = self.formats.entry(info.id).or_insert_with(|| event_format(info.event_desc)).clone();
                        if let Some((pid, description)) = format.and_then(|format| process_format::read(&format, raw)) {
                            self.descriptions.insert(pid, description);
                        }
                        continue;
                    }
                    let attribution = &mut self.attribution;
                    let format = self.formats.entry(info.id).or_insert_with(|| {
                        let format = event_format(info.event_desc);
                        if let Some(f) = &format {
                            attribution.add_event(info.id, f.clone());
                        }
                        format
                    });
                    if format.is_some() {
                        if let Some(held) = self.executables.held.remove(&info.pid) {
                            push_exec(&mut self.attribution, info.pid, held, ProcessInfo::default());
                        }
                        let described = self.descriptions.remove(&info.pid).map(Box::new);
                        let stack = Callchain::parse(info.callchain()).map(|(c, _)| c.addresses().collect()).unwrap_or_default();
                        let sample = Pending::Sample { id: info.id, pid: info.pid, tid: info.tid, cpu: info.cpu, raw: raw.into(), stack, described };
                        self.attribution.push(info.time, sample);
                    }
                }
                PerfEventHeaderType::Comm
                | PerfEventHeaderType::Mmap
                | PerfEventHeaderType::Mmap2
                | PerfEventHeaderType::Fork
                | PerfEventHeaderType::Exit
                | PerfEventHeaderType::Namespaces
                | PerfEventHeaderType::Lost => {
                    let (time, cpu, id) = match guarded(|| self.file.get_non_sample_event_info(&event)) {
                        Ok(Ok(info)) => (info.time, info.cpu, info.id),
                        Ok(Err(_)) => (0, 0, 0),
                        Err(source) => return Err(self.broken(source)),
                    };
                    let body = event.data.get(8..).unwrap_or_default();
                    if self.attribution.names_stacks() {
                        if let Some(mapped) = mapping(event.header.ty, body, event.header.misc.0) {
                            self.attribution.push(time, Pending::Mapped(Box::new(mapped)));
                        }
                    }
                    if let Some(task) = TaskRecord::parse(event.header.ty, body, event.header.misc.0) {
                        self.apply(task, time, cpu, self.sideband_ids.contains(&id));
                    }
                }
                _ => {}
            }
        }
    }

    /// The error that ends the file: nothing after it is read.
    fn broken(&mut self, source: io::Error) -> ArchiveError {
        self.finished = true;
        ArchiveError::Broken { path: self.path.clone(), records: self.records, source }
    }

    fn apply(&mut self, task: TaskRecord, time: u64, cpu: u32, sideband: bool) {
        if let TaskRecord::Mapped { pid, file } = task {
            if !self.executables.described {
                match self.executables.held.remove(&pid) {
                    Some(held) => push_exec(&mut self.attribution, pid, held, ProcessInfo { executable: Some(file), ..ProcessInfo::default() }),
                    None => self.attribution.push(time, Pending::Program { pid, executable: file.into() }),
                }
            }
            return;
        }
        if let (TaskRecord::Comm { pid, tid, comm, exec: true }, false, true) = (&task, self.executables.described, self.initialized) {
            if let Some(held) = self.executables.held.insert(*pid, (time, *tid, comm.clone())) {
                // Two execs before a mapping: the first one is told as is.
                push_exec(&mut self.attribution, *pid, held, ProcessInfo::default());
            }
            return;
        }
        let a = &mut self.attribution;
        if !self.initialized {
            // The threads at the start, as /proc showed them then.
            match task {
                TaskRecord::Comm { pid, tid, comm, .. } => a.threads.synthesize(pid, tid, &comm, time),
                TaskRecord::Namespaces { tid, namespaces } => a.threads.synthesize_namespaces(tid, Arc::new(namespaces), time),
                _ => {}
            }
            return;
        }
        let (time, pending) = match task {
            TaskRecord::Comm { pid, tid, comm, exec } => {
                let exec = exec.then(|| Box::new(self.descriptions.remove(&pid).unwrap_or_default()));
                (time, Pending::Comm { pid, tid, comm: comm.into(), exec })
            }
            TaskRecord::Fork { pid, tid, ptid, time } => (time, Pending::Fork { pid, tid, ptid }),
            TaskRecord::Exit { tid, time } => (time, Pending::Exit { tid }),
            TaskRecord::Namespaces { tid, namespaces } => (time, Pending::Namespaces { tid, namespaces: Box::new(namespaces) }),
            TaskRecord::Lost { count } => (time, Pending::Lost { cpu, count, sideband, thread: None }),
            // Taken above.
            TaskRecord::Mapped { .. } => return,
        };
        a.push(time, pending);
    }
}

impl ArchiveReader {
    /// Pushes every exec COMM still held: its program was not mapped in
    /// the round it exec'd in, so it goes without an executable.
    fn release_held_execs(&mut self) {
        for (pid, exec) in self.executables.held.drain() {
            push_exec(&mut self.attribution, pid, exec, ProcessInfo::default());
        }
    }
}

/// Pushes the exec COMM `held` of `pid`, with what is known of the new
/// program.
fn push_exec(attribution: &mut Attribution, pid: u32, (time, tid, comm): (u64, u32, String), info: ProcessInfo) {
    attribution.push(time, Pending::Comm { pid, tid, comm: comm.into(), exec: Some(Box::new(info)) });
}

fn process_name() -> String {
    format!("{}:{}", process_format::SYSTEM, process_format::NAME)
}

/// Our layout of a tracepoint the file describes, from the format text
/// its tracing data holds; None for an event with no format.
fn event_format(desc: &PerfEventDesc) -> Option<Arc<EventFormat>> {
    let format = desc.format()?;
    // A format that cannot be printed is an event we do not decode.
    let text = guarded(|| {
        let mut text = String::new();
        format.write_to(&mut text).ok().map(|()| text)
    })
    .ok()??;
    EventFormat::parse(format.system_name(), &text).ok().map(Arc::new)
}

thread_local! {
    /// Set while this thread runs a [`guarded`] call.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `parse`, a call into `tracepoint_perf` or `tracepoint_decode`; if
/// it panics, the panic's message as an error of kind `InvalidData`.
//
// Why: these crates index slices where the file says, and some of their
// parsers panic on bytes they do not expect: a field declaration with a
// non-ASCII byte in the format text a file carries makes
// `PerfFieldFormat::new` slice a str inside a character (found by the
// `archive_reader` fuzz target; the test
// `a_non_ascii_field_declaration_is_a_broken_file_not_a_panic`), and
// their debug_asserts check the file too. A file is input: reading it
// must end in an error that names it, not take the program down with it.
// Only these calls are guarded, so a bug of our own still panics where a
// test or the fuzzer sees it.
fn guarded<T>(parse: impl FnOnce() -> T) -> io::Result<T> {
    silence_guarded_panics();
    GUARDED.with(|g| g.set(true));
    // Unwind safety: after a panic the caller drops or stops using what
    // `parse` touched (the reader is marked finished).
    let result = panic::catch_unwind(AssertUnwindSafe(parse));
    GUARDED.with(|g| g.set(false));
    result.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message");
        io::Error::new(io::ErrorKind::InvalidData, format!("tracepoint_perf could not parse it: {message}"))
    })
}

/// Keeps the panic hook quiet for a panic inside [`guarded`], which
/// becomes an error with its own message; any other panic reaches the
/// hook that was installed before (the default one prints it).
fn silence_guarded_panics() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// CLOCK_DATA: version, clockid, wall clock ns, clockid ns.
fn clock_data(header: &[u8]) -> Option<(u64, u64)> {
    let u32_at = |at: usize| u32_at(header, at);
    let u64_at = |at: usize| u64_at(header, at);
    if u32_at(4)? != libc::CLOCK_MONOTONIC as u32 {
        return None;
    }
    Some((u64_at(16)?, u64_at(8)?))
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match io::Read::read(file, &mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// The mapping an MMAP2 or MMAP record's `body` (after its header) tells,
/// with `misc` its header's; None for another record or a body too short.
fn mapping(kind: PerfEventHeaderType, body: &[u8], misc: u16) -> Option<Mapped> {
    let name = |at: usize| -> Option<Box<[u8]>> {
        let name = body.get(at..)?;
        Some(name[..name.iter().position(|&b| b == 0)?].into())
    };
    // pid, tid, addr, len, pgoff: the same in both.
    let (pid, start, len, offset) = (u32_at(body, 0)?, u64_at(body, 8)?, u64_at(body, 16)?, u64_at(body, 24)?);
    let (executable, path) = match kind {
        // (maj, min, ino, generation | build id): 24 bytes, prot, flags, filename.
        PerfEventHeaderType::Mmap2 => (u32_at(body, 56)? & libc::PROT_EXEC as u32 != 0, name(64)?),
        // PERF_RECORD_MISC_MMAP_DATA, the COMM_EXEC bit: not code.
        PerfEventHeaderType::Mmap => (misc & PERF_RECORD_MISC_COMM_EXEC == 0, name(32)?),
        _ => return None,
    };
    Some(Mapped { pid, start, len, offset, executable, path })
}

/// The body of a task record, whatever the file's sample_id layout.
#[derive(Debug, PartialEq)]
enum TaskRecord {
    Comm { pid: u32, tid: u32, comm: String, exec: bool },
    /// A file mapped executable (an MMAP2 with PROT_EXEC, an MMAP not
    /// marked data), which perf records and synthesizes: the first since a
    /// process's exec is its executable.
    Mapped { pid: u32, file: String },
    Fork { pid: u32, tid: u32, ptid: u32, time: u64 },
    Exit { tid: u32, time: u64 },
    Namespaces { tid: u32, namespaces: Namespaces },
    Lost { count: u64 },
}

impl TaskRecord {
    /// `body` is the record after its 8-byte header, `misc` the header's;
    /// a body too short for its kind is no record.
    fn parse(kind: PerfEventHeaderType, body: &[u8], misc: u16) -> Option<TaskRecord> {
        let u32_at = |at: usize| u32_at(body, at);
        let u64_at = |at: usize| u64_at(body, at);
        // PERF_RECORD_MISC_COMM_EXEC on a COMM, PERF_RECORD_MISC_MMAP_DATA
        // on an MMAP: the same bit.
        let exec = misc & PERF_RECORD_MISC_COMM_EXEC != 0;
        Some(match kind {
            // Code mapped from a file: not `[vdso]` or `//anon`.
            PerfEventHeaderType::Mmap2 | PerfEventHeaderType::Mmap => {
                let mapped = mapping(kind, body, misc).filter(|m| m.executable && m.path.starts_with(b"/"))?;
                TaskRecord::Mapped { pid: mapped.pid, file: String::from_utf8_lossy(&mapped.path).into_owned() }
            }
            PerfEventHeaderType::Comm => {
                let name = body.get(8..)?;
                let end = name.iter().position(|&b| b == 0)?;
                TaskRecord::Comm { pid: u32_at(0)?, tid: u32_at(4)?, comm: String::from_utf8_lossy(&name[..end]).into_owned(), exec }
            }
            // pid, ppid, tid, ptid, time.
            PerfEventHeaderType::Fork => TaskRecord::Fork { pid: u32_at(0)?, tid: u32_at(8)?, ptid: u32_at(12)?, time: u64_at(16)? },
            PerfEventHeaderType::Exit => TaskRecord::Exit { tid: u32_at(8)?, time: u64_at(16)? },
            PerfEventHeaderType::Namespaces => {
                let count = u64_at(8)?;
                // (dev, ino) pairs, bounded by the bytes there.
                if count > (body.len() / 16) as u64 {
                    return None;
                }
                let inodes = (0..count as usize).map(|i| u64_at(16 + 16 * i + 8).unwrap_or(0));
                TaskRecord::Namespaces { tid: u32_at(4)?, namespaces: Namespaces::from_inodes(inodes) }
            }
            // id, lost.
            PerfEventHeaderType::Lost => TaskRecord::Lost { count: u64_at(8)? },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MMAP2 body: pid, tid, addr, len, pgoff, 24 bytes of device and
    /// inode, prot, flags, the file.
    fn mmap2(pid: u32, prot: i32, file: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&[0; 24 + 24]);
        b.extend_from_slice(&(prot as u32).to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        b.extend_from_slice(file);
        b
    }

    #[test]
    fn an_executable_file_mapping_names_the_file_and_others_nothing() {
        let exec = libc::PROT_READ | libc::PROT_EXEC;
        assert_eq!(
            TaskRecord::parse(PerfEventHeaderType::Mmap2, &mmap2(9, exec, b"/usr/bin/srv\0\0\0\0"), 0),
            Some(TaskRecord::Mapped { pid: 9, file: "/usr/bin/srv".into() })
        );
        // Data, no file, or a name cut short: nothing.
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Mmap2, &mmap2(9, libc::PROT_READ, b"/usr/lib/x.so\0"), 0), None);
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Mmap2, &mmap2(9, exec, b"[vdso]\0"), 0), None);
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Mmap2, &mmap2(9, exec, b"/usr/bin/srv"), 0), None);
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Mmap2, &mmap2(9, exec, b"")[..50], 0), None);
        // An MMAP: pid, tid, addr, len, pgoff, the file; data when marked so.
        let mut mmap = Vec::new();
        mmap.extend_from_slice(&4u32.to_ne_bytes());
        mmap.extend_from_slice(&4u32.to_ne_bytes());
        mmap.extend_from_slice(&[0; 24]);
        mmap.extend_from_slice(b"/bin/sh\0");
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Mmap, &mmap, 0), Some(TaskRecord::Mapped { pid: 4, file: "/bin/sh".into() }));
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Mmap, &mmap, PERF_RECORD_MISC_COMM_EXEC), None, "MMAP_DATA, the same bit");
    }

    #[test]
    fn a_mapping_record_gives_its_range_offset_and_file_and_a_cut_one_nothing() {
        let mut body = mmap2(9, libc::PROT_READ | libc::PROT_EXEC, b"/usr/lib/x.so\0\0\0");
        body[8..16].copy_from_slice(&0x7f00_0000u64.to_ne_bytes());
        body[16..24].copy_from_slice(&0x2000u64.to_ne_bytes());
        body[24..32].copy_from_slice(&0x1000u64.to_ne_bytes());
        let m = mapping(PerfEventHeaderType::Mmap2, &body, 0).unwrap();
        assert_eq!((m.pid, m.start, m.len, m.offset, m.executable, &*m.path), (9, 0x7f00_0000, 0x2000, 0x1000, true, &b"/usr/lib/x.so"[..]));
        let data = mmap2(9, libc::PROT_READ, b"/data\0");
        assert!(!mapping(PerfEventHeaderType::Mmap2, &data, 0).unwrap().executable);
        // An MMAP: pid, tid, addr, len, pgoff, file; MMAP_DATA is no code.
        let mut mmap = body[..32].to_vec();
        mmap.extend_from_slice(b"/bin/sh\0");
        assert!(mapping(PerfEventHeaderType::Mmap, &mmap, 0).unwrap().executable);
        assert!(!mapping(PerfEventHeaderType::Mmap, &mmap, PERF_RECORD_MISC_COMM_EXEC).unwrap().executable);
        for len in 0..body.len() - 3 {
            assert!(mapping(PerfEventHeaderType::Mmap2, &body[..len], 0).is_none(), "cut to {len}");
        }
        assert!(mapping(PerfEventHeaderType::Comm, &body, 0).is_none());
    }

    #[test]
    fn a_task_record_cut_short_is_no_record() {
        let mut comm = Vec::new();
        comm.extend_from_slice(&5u32.to_ne_bytes());
        comm.extend_from_slice(&6u32.to_ne_bytes());
        comm.extend_from_slice(b"worker\0\0");
        assert_eq!(
            TaskRecord::parse(PerfEventHeaderType::Comm, &comm, PERF_RECORD_MISC_COMM_EXEC),
            Some(TaskRecord::Comm { pid: 5, tid: 6, comm: "worker".into(), exec: true })
        );
        // No NUL: the name ran off the end.
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Comm, &comm[..14], 0), None);
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Fork, &comm[..12], 0), None);
        let mut ns = Vec::new();
        ns.extend_from_slice(&1u32.to_ne_bytes());
        ns.extend_from_slice(&1u32.to_ne_bytes());
        ns.extend_from_slice(&u64::MAX.to_ne_bytes());
        assert_eq!(TaskRecord::parse(PerfEventHeaderType::Namespaces, &ns, 0), None, "a count beyond the bytes");
    }

    #[test]
    fn a_panic_inside_guarded_is_an_invalid_data_error() {
        assert_eq!(guarded(|| 7).unwrap(), 7);
        let e = guarded(|| -> u8 { panic!("slice index {} out of range", 9) }).unwrap_err();
        assert_eq!((e.kind(), e.to_string()), (io::ErrorKind::InvalidData, "tracepoint_perf could not parse it: slice index 9 out of range".into()));
        let e = guarded(|| -> u8 { panic!("static") }).unwrap_err();
        assert_eq!(e.to_string(), "tracepoint_perf could not parse it: static");
        assert!(!GUARDED.with(Cell::get), "the next panic reaches the hook again");
    }

    #[test]
    fn a_non_ascii_field_declaration_is_a_broken_file_not_a_panic() {
        // The CLI's recorded archive, with `field:u32 pid;` of the
        // usertrace:process format made `field:u32 p\u{c7};`: the first
        // crash the archive_reader fuzz target found, in tracepoint_decode's
        // field parser, called from `PerfDataFileReader::open_file`.
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/archive.data");
        let mut bytes = std::fs::read(fixture).unwrap();
        let at = bytes.windows(14).position(|w| w == b"field:u32 pid;").unwrap();
        bytes[at + 11..at + 13].copy_from_slice("\u{c7}".as_bytes());
        let path = std::env::temp_dir().join(format!("usertrace-reader-non-ascii-{}.data", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let result = ArchiveReader::open(&path);
        std::fs::remove_file(&path).unwrap();
        match result {
            Err(ArchiveError::Broken { records: 0, source, .. }) => {
                assert_eq!(source.kind(), io::ErrorKind::InvalidData);
                assert!(source.to_string().starts_with("tracepoint_perf could not parse it: end byte index 6 is not a char boundary"), "{source}");
            }
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("opened"),
        }
    }

    #[test]
    fn the_position_walks_the_records_from_their_start_to_their_end() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/archive.data");
        let mut reader = ArchiveReader::open(&fixture).unwrap();
        let (start, end) = (reader.file.data_begin_file_pos(), reader.file.data_end_file_pos());
        assert_eq!(reader.position(), start);
        assert!(start > 0 && end <= std::fs::metadata(&fixture).unwrap().len(), "{start}..{end}");
        let mut last = start;
        while reader.next_round().unwrap().is_some() {
            assert!(reader.position() >= last && reader.position() <= end, "{last} then {}", reader.position());
            last = reader.position();
        }
        assert_eq!(reader.position(), end, "every record read");
    }

    #[test]
    fn the_clock_is_read_only_for_clock_monotonic() {
        let mut header = Vec::new();
        header.extend_from_slice(&1u32.to_ne_bytes());
        header.extend_from_slice(&(libc::CLOCK_MONOTONIC as u32).to_ne_bytes());
        header.extend_from_slice(&1_700_000_000_000_000_000u64.to_ne_bytes());
        header.extend_from_slice(&5_000u64.to_ne_bytes());
        assert_eq!(clock_data(&header), Some((5_000, 1_700_000_000_000_000_000)));
        header[4..8].copy_from_slice(&(libc::CLOCK_REALTIME as u32).to_ne_bytes());
        assert_eq!(clock_data(&header), None);
        assert_eq!(clock_data(&header[..10]), None);
    }
}

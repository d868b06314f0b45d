//! Writing the archive while the session records. A perf ring's records
//! are written straight from the ring's pages, as `perf record` writes
//! them, before the ring frees them: one `writev` per ring read, with the
//! process descriptions that go before some of them in between. What is
//! not in a perf ring (the threads of the start, shared-memory records, a
//! flight recorder's window) is copied into a buffer, written with the
//! next ring's records or at the end of the round. Each round ends with
//! `FINISHED_ROUND`. The headers (attrs, formats, clock) are written when
//! the file is finished.

use std::io::{self, IoSlice};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use perf_event_open_sys::bindings::perf_event_attr;
use tracepoint_decode::PerfEventFormat;
use tracepoint_perf::{PerfDataFileWriter, PerfHeaderIndex};

use super::{dump_format, format};
use crate::error::Error;
use crate::format::EventFormat;
use crate::processes::ProcessInfo;
use crate::procfs::ThreadAtStart;
use crate::mappings::parse_maps_line;
use crate::record::{back_to_back, kind, HEADER_LEN, PERF_RECORD_COMM, PERF_RECORD_MISC_USER, PERF_RECORD_MMAP2, PERF_RECORD_NAMESPACES, PERF_RECORD_SAMPLE};
use crate::sys;

/// Where a session writes its archive.
#[derive(Debug, Clone)]
pub struct ArchiveOptions {
    /// The file to write: a new regular file, which perf.data must be (its
    /// headers are written last, at the front). A caller that puts the
    /// finished file in place passes its temporary file here.
    pub path: PathBuf,
    /// The name to give in messages: what the user asked for.
    pub shown_as: PathBuf,
    /// CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds read together: the
    /// file's CLOCK_DATA, which dates its events on the wall clock.
    pub clock: (u64, u64),
}

/// What an archive says of the events its records come from: their attrs,
/// ids and formats. Kept by a flight recorder, which writes them into
/// every dump.
#[derive(Clone, Default)]
pub(crate) struct Descriptions(Vec<Description>);

#[derive(Clone)]
enum Description {
    Carrier { ids: Vec<u64>, attr: perf_event_attr, name: &'static str },
    Tracepoint { ids: Vec<u64>, attr: perf_event_attr, format: Arc<EventFormat>, text: String },
}

impl Descriptions {
    /// A dummy event, as [`ArchiveWriter::describe_carrier`].
    pub(crate) fn carrier(&mut self, ids: &[u64], attr: &perf_event_attr, name: &'static str) {
        self.0.push(Description::Carrier { ids: ids.to_vec(), attr: *attr, name });
    }

    /// A tracepoint, as [`ArchiveWriter::describe_tracepoint`].
    pub(crate) fn tracepoint(&mut self, ids: &[u64], attr: &perf_event_attr, format: &Arc<EventFormat>, text: &str) {
        self.0.push(Description::Tracepoint { ids: ids.to_vec(), attr: *attr, format: format.clone(), text: text.to_owned() });
    }
}

/// A perf.data file being written by a session.
pub struct ArchiveWriter {
    file: PerfDataFileWriter,
    shown_as: PathBuf,
    /// Records copied and not yet written, written before the next ring's
    /// records or at the end of the round.
    round: Vec<u8>,
    /// Descriptions to go between the records of the ring being read:
    /// where each goes in its published bytes, and where its bytes are in
    /// `inserted_bytes`, in the order of the records.
    inserted: Vec<(usize, Range<usize>)>,
    inserted_bytes: Vec<u8>,
    /// The first error of a write from a ring, told at the end of the
    /// round: the ring's read cannot fail, and writes nothing after it.
    failed: Option<io::Error>,
    /// The first and last sample times, for the SAMPLE_TIME header.
    sample_times: Option<(u64, u64)>,
    clock: (u64, u64),
    cpus: u32,
}

impl ArchiveWriter {
    /// Creates the file and describes `usertrace:process` in it.
    pub(crate) fn create(options: &ArchiveOptions, tracefs: &Path, cpus: u32) -> Result<ArchiveWriter, Error> {
        let mut file = PerfDataFileWriter::new();
        let failed = |error| Error::Io { path: options.shown_as.clone(), error };
        let path = options.path.to_str().ok_or_else(|| failed(io::Error::new(io::ErrorKind::InvalidInput, "the path is not UTF-8")))?;
        file.create_file(path).map_err(failed)?;
        file.set_tracing_data_required(std::mem::size_of::<usize>() as u8, sys::page_size());
        // perf reads the ring buffer's own layout from these; the writer
        // has defaults for a kernel that does not show them.
        for (name, set) in [
            ("header_page", PerfDataFileWriter::set_tracing_data_header_page as fn(&mut PerfDataFileWriter, &[u8]) -> bool),
            ("header_event", PerfDataFileWriter::set_tracing_data_header_event),
        ] {
            if let Ok(bytes) = read_tracefs(&tracefs.join("events").join(name)) {
                set(&mut file, &bytes);
            }
        }
        let mut writer =
            ArchiveWriter {
            file,
            shown_as: options.shown_as.clone(),
            round: Vec::new(),
            inserted: Vec::new(),
            inserted_bytes: Vec::new(),
            failed: None,
            sample_times: None,
            clock: options.clock,
            cpus,
        };
        let process = EventFormat::parse(format::SYSTEM, &format::format_text()).expect("usertrace:process has a valid format");
        writer.describe_tracepoint(&[format::PERF_ID], &sys::tracepoint_attr(process.id, false), &process, &format::format_text());
        Ok(writer)
    }

    /// Describes what `descriptions` holds.
    pub(crate) fn describe_all(&mut self, descriptions: &Descriptions) {
        for d in &descriptions.0 {
            match d {
                Description::Carrier { ids, attr, name } => self.describe_carrier(ids, attr, name),
                Description::Tracepoint { ids, attr, format, text } => self.describe_tracepoint(ids, attr, format, text),
            }
        }
    }

    /// Names the dummy event `name` whose perf ids are `ids`.
    pub(crate) fn describe_carrier(&mut self, ids: &[u64], attr: &perf_event_attr, name: &str) {
        self.file.add_event_desc(ids, &sys::perf_data_attr(attr), name);
    }

    /// Describes a tracepoint, from the text of its tracefs format file:
    /// what `perf script` decodes its samples with.
    pub(crate) fn describe_tracepoint(&mut self, ids: &[u64], attr: &perf_event_attr, format: &EventFormat, text: &str) {
        // A tracepoint opened again (--sched's scheduler tracepoints, each
        // time the threads it follows change) has new ids under the format
        // already written: those go in as one more event of the same
        // tracepoint, which perf and our reader decode by its format, found
        // by the attr's config. (The writer keeps one format per tracepoint
        // and ignores a second one: the new ids would otherwise be lost,
        // and perf would stop at their first sample.)
        let attr = sys::perf_data_attr(attr);
        if self.file.has_tracepoint_event_desc(format.id as u32) {
            self.file.add_event_desc(ids, &attr, &format.full_name());
            return;
        }
        let long_is_64_bits = std::mem::size_of::<usize>() == 8;
        if let Some(parsed) = PerfEventFormat::parse(long_is_64_bits, &format.system, text) {
            self.file.add_tracepoint_event_desc(ids, &attr, &format.full_name(), &Arc::new(parsed));
        }
    }

    /// A thread `/proc` showed when the session started, as the COMM (and
    /// NAMESPACES) record `perf record` synthesizes for it; `id` is a
    /// sideband event's.
    pub(crate) fn synthesize_thread(&mut self, thread: &ThreadAtStart<'_>, id: u64) {
        let mut body = Vec::with_capacity(32);
        body.extend_from_slice(&thread.pid.to_ne_bytes());
        body.extend_from_slice(&thread.tid.to_ne_bytes());
        body.extend_from_slice(thread.comm.as_bytes());
        body.resize((body.len() + 1).next_multiple_of(8), 0);
        self.push_side_record(PERF_RECORD_COMM, &body, thread, thread.time, id);
        if let Some((namespaces, time)) = thread.namespaces {
            let mut body = Vec::with_capacity(16 + 16 * 7);
            body.extend_from_slice(&thread.pid.to_ne_bytes());
            body.extend_from_slice(&thread.tid.to_ne_bytes());
            body.extend_from_slice(&7u64.to_ne_bytes());
            for (_, inode) in namespaces.iter() {
                // The device is not recorded: only inodes tell namespaces apart here.
                body.extend_from_slice(&0u64.to_ne_bytes());
                body.extend_from_slice(&inode.to_ne_bytes());
            }
            self.push_side_record(PERF_RECORD_NAMESPACES, &body, thread, time, id);
        }
    }

    /// The code mappings of `thread`'s process, a process's main thread
    /// that existed at the start, from `/proc/PID/maps`: MMAP2 records, as
    /// `perf record` synthesizes them, so that the addresses of its
    /// stacks can be named later (by `perf script` and `convert`).
    pub(crate) fn synthesize_maps(&mut self, proc_root: &Path, thread: &ThreadAtStart<'_>, id: u64) {
        let Ok(maps) = std::fs::read_to_string(proc_root.join(thread.pid.to_string()).join("maps")) else { return };
        for line in maps.lines() {
            let Some((start, len, offset, true, path)) = parse_maps_line(line) else { continue };
            if path.is_empty() {
                continue;
            }
            let perms = line.split(' ').nth(1).unwrap_or_default().as_bytes();
            let prot = [(b'r', libc::PROT_READ), (b'w', libc::PROT_WRITE), (b'x', libc::PROT_EXEC)]
                .iter()
                .zip(perms)
                .filter(|((want, _), got)| want == *got)
                .fold(0, |all, ((_, bit), _)| all | bit);
            let flags = if perms.get(3) == Some(&b's') { libc::MAP_SHARED } else { libc::MAP_PRIVATE };
            let mut body = Vec::with_capacity(64 + path.len() + 8);
            body.extend_from_slice(&thread.pid.to_ne_bytes());
            body.extend_from_slice(&thread.tid.to_ne_bytes());
            for v in [start, len, offset] {
                body.extend_from_slice(&v.to_ne_bytes());
            }
            // maj, min, ino, ino_generation: not needed to find the file.
            body.extend_from_slice(&[0; 24]);
            body.extend_from_slice(&(prot as u32).to_ne_bytes());
            body.extend_from_slice(&(flags as u32).to_ne_bytes());
            body.extend_from_slice(path.as_bytes());
            body.resize((body.len() + 1).next_multiple_of(8), 0);
            self.push_side_record_misc(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &body, thread, thread.time, id);
        }
    }

    fn push_side_record(&mut self, kind: u32, body: &[u8], thread: &ThreadAtStart<'_>, time: u64, id: u64) {
        self.push_side_record_misc(kind, 0, body, thread, time, id);
    }

    fn push_side_record_misc(&mut self, kind: u32, misc: u16, body: &[u8], thread: &ThreadAtStart<'_>, time: u64, id: u64) {
        let size = HEADER_LEN + body.len() + 32;
        self.round.extend_from_slice(&kind.to_ne_bytes());
        self.round.extend_from_slice(&misc.to_ne_bytes());
        self.round.extend_from_slice(&(size as u16).to_ne_bytes());
        self.round.extend_from_slice(body);
        // sample_id: pid, tid, time, cpu, res, id.
        self.round.extend_from_slice(&thread.pid.to_ne_bytes());
        self.round.extend_from_slice(&thread.tid.to_ne_bytes());
        self.round.extend_from_slice(&time.to_ne_bytes());
        self.round.extend_from_slice(&0u64.to_ne_bytes());
        self.round.extend_from_slice(&id.to_ne_bytes());
    }

    /// Ends the threads of the start: `FINISHED_INIT`.
    pub(crate) fn finish_init(&mut self) -> Result<(), Error> {
        let written = self.file.write_event_data(&self.round).and_then(|()| self.file.write_finished_init());
        self.round.clear();
        written.map_err(|error| Error::Io { path: self.shown_as.clone(), error })
    }

    /// A record copied, not in a perf ring being read; `sample_time` for a
    /// sample.
    pub(crate) fn copy(&mut self, bytes: &[u8], sample_time: Option<u64>) {
        self.round.extend_from_slice(bytes);
        self.saw_sample(sample_time);
    }

    /// A record of the perf ring being read, written from the ring by
    /// [`ArchiveWriter::write_published`]; `sample_time` for a sample.
    pub(crate) fn saw_sample(&mut self, sample_time: Option<u64>) {
        if let Some(t) = sample_time {
            let (first, last) = self.sample_times.get_or_insert((t, t));
            *first = (*first).min(t);
            *last = (*last).max(t);
        }
    }

    /// Describes `pid` in a `usertrace:process` sample at `time`, written
    /// before the record at `at` in the published bytes of the perf ring
    /// being read.
    pub(crate) fn process_before(&mut self, at: usize, pid: u32, time: u64, cpu: u32, info: &ProcessInfo) {
        let start = self.inserted_bytes.len();
        self.inserted_bytes.extend_from_slice(&format::sample(pid, time, cpu, info));
        self.inserted.push((at, start..self.inserted_bytes.len()));
    }

    /// Writes the records of a perf ring, `first` then `second` as the
    /// ring holds them, after what was copied before them, with the
    /// descriptions [`ArchiveWriter::process_before`] placed between them:
    /// one `writev`, no copy. An error is kept for the end of the round.
    pub(crate) fn write_published(&mut self, first: &[u8], second: &[u8]) {
        let (inserted, inserted_bytes) = (std::mem::take(&mut self.inserted), std::mem::take(&mut self.inserted_bytes));
        if self.failed.is_none() {
            let mut slices = interleaved(&self.round, [first, second], &inserted, &inserted_bytes);
            if let Err(e) = write_all_vectored(&mut self.file, &mut slices) {
                self.failed = Some(e);
            }
        }
        self.round.clear();
        // Kept for the next read: their allocations are reused.
        (self.inserted, self.inserted_bytes) = (inserted, inserted_bytes);
        self.inserted.clear();
        self.inserted_bytes.clear();
    }

    /// A round's records as the rings gave them (a flight recorder's,
    /// kept since), back to back.
    pub(crate) fn copy_round(&mut self, bytes: &[u8]) {
        for record in back_to_back(bytes) {
            let time = (kind(record) == PERF_RECORD_SAMPLE)
                .then(|| record.get(HEADER_LEN + 16..HEADER_LEN + 24))
                .flatten()
                .and_then(|b| b.try_into().ok())
                .map(u64::from_ne_bytes);
            self.copy(record, time);
        }
    }

    /// Says, in a `usertrace:dump` sample at `time`, why this file was
    /// written and what window of events it holds.
    pub(crate) fn dump_record(&mut self, time: u64, reason: &str, first: u64, last: u64, lost: u64) {
        let text = dump_format::format_text();
        let described = EventFormat::parse(format::SYSTEM, &text).expect("usertrace:dump has a valid format");
        self.describe_tracepoint(&[dump_format::PERF_ID], &sys::tracepoint_attr(described.id, false), &described, &text);
        self.round.extend_from_slice(&dump_format::sample(time, reason, first, last, lost));
    }

    /// Describes `pid` in a `usertrace:process` sample at `time`.
    pub(crate) fn process(&mut self, pid: u32, time: u64, cpu: u32, info: &ProcessInfo) {
        self.round.extend_from_slice(&format::sample(pid, time, cpu, info));
    }

    /// Writes this round's records, then `FINISHED_ROUND`: every round,
    /// an empty one too, so that a reader's rounds are the session's.
    pub(crate) fn end_round(&mut self) -> Result<(), Error> {
        let written = match self.failed.take() {
            Some(error) => Err(error),
            None => self.file.write_event_data(&self.round).and_then(|()| self.file.write_finished_round()),
        };
        self.round.clear();
        written.map_err(|error| Error::Io { path: self.shown_as.clone(), error })
    }

    /// Writes what is left and the headers, and closes the file. The last
    /// records (a flush's) are one round that ends with the file.
    pub(crate) fn finish(&mut self) -> Result<(), Error> {
        let failed = |error| Error::Io { path: self.shown_as.clone(), error };
        if let Some(error) = self.failed.take() {
            return Err(failed(error));
        }
        self.file.write_event_data(&self.round).map_err(failed)?;
        self.round.clear();
        let (monotonic, unix) = self.clock;
        self.file.set_clockid_header(libc::CLOCK_MONOTONIC as u32);
        self.file.set_clock_data_header(libc::CLOCK_MONOTONIC as u32, unix, monotonic);
        self.file.set_nr_cpus_header(self.cpus, self.cpus);
        if let Some((first, last)) = self.sample_times {
            self.file.set_sample_time_header(first, last);
        }
        let read = |name: &str| std::fs::read_to_string(format!("/proc/sys/kernel/{name}")).unwrap_or_default();
        let (hostname, release) = (read("hostname"), read("osrelease"));
        self.file.set_utsname_headers(hostname.trim_end().as_bytes(), release.trim_end().as_bytes(), std::env::consts::ARCH.as_bytes());
        self.file.set_header(PerfHeaderIndex::Cmdline, &string_list(std::env::args()));
        self.file.finalize_and_close().map_err(failed)
    }
}

/// What [`ArchiveWriter::write_published`] writes, in order: `copied`,
/// then the published bytes (`first` then `second`) with each inserted
/// stretch of `inserted_bytes` before the byte of the published ones it
/// names. No empty slice.
fn interleaved<'a>(copied: &'a [u8], [first, second]: [&'a [u8]; 2], inserted: &[(usize, Range<usize>)], inserted_bytes: &'a [u8]) -> Vec<IoSlice<'a>> {
    let split = first.len();
    let mut slices = Vec::with_capacity(3 + 3 * inserted.len());
    let published = |slices: &mut Vec<IoSlice<'a>>, range: Range<usize>| {
        slices.push(IoSlice::new(&first[range.start.min(split)..range.end.min(split)]));
        slices.push(IoSlice::new(&second[range.start.max(split) - split..range.end.max(split) - split]));
    };
    slices.push(IoSlice::new(copied));
    let mut from = 0;
    for (at, bytes) in inserted {
        published(&mut slices, from..*at);
        slices.push(IoSlice::new(&inserted_bytes[bytes.clone()]));
        from = *at;
    }
    published(&mut slices, from..first.len() + second.len());
    slices.retain(|s| !s.is_empty());
    slices
}

/// Writes every byte of `slices`, in as many `writev`s as it takes.
fn write_all_vectored(file: &mut PerfDataFileWriter, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !slices.is_empty() {
        match file.write_event_data_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A tracefs file, read in large reads: `header_page` says it is 32 bytes
/// long and ends a read the size of that early, so the reads that
/// `std::fs::read` sizes by the file's length see only its first line.
fn read_tracefs(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match io::Read::read(&mut file, &mut chunk)? {
            0 => return Ok(bytes),
            n => bytes.extend_from_slice(&chunk[..n]),
        }
    }
}

/// perf's `perf_header_string_list`, as its CMDLINE header holds argv:
/// a count, then each string's padded length and its NUL-ended bytes.
fn string_list(strings: impl Iterator<Item = String>) -> Vec<u8> {
    let strings: Vec<String> = strings.collect();
    let mut out = Vec::new();
    out.extend_from_slice(&(strings.len() as u32).to_ne_bytes());
    for s in &strings {
        let len = (s.len() + 1).next_multiple_of(8);
        out.extend_from_slice(&(len as u32).to_ne_bytes());
        let start = out.len();
        out.extend_from_slice(s.as_bytes());
        out.resize(start + len, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(copied: &[u8], first: &[u8], second: &[u8], inserted: &[(usize, &[u8])]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let ranges: Vec<(usize, Range<usize>)> = inserted
            .iter()
            .map(|(at, b)| {
                bytes.extend_from_slice(b);
                (*at, bytes.len() - b.len()..bytes.len())
            })
            .collect();
        let slices = interleaved(copied, [first, second], &ranges, &bytes);
        assert!(slices.iter().all(|s| !s.is_empty()));
        slices.iter().flat_map(|s| s.iter().copied()).collect()
    }

    #[test]
    fn descriptions_go_before_the_records_they_name_on_either_side_of_the_wrap() {
        // Records "ab", "cd", "ef", "gh", wrapped after "abc".
        let (first, second) = (&b"abc"[..], &b"defgh"[..]);
        assert_eq!(written(b"", first, second, &[]), b"abcdefgh");
        assert_eq!(written(b"xy", first, second, &[]), b"xyabcdefgh");
        // Before the first record, the one that wraps, one after the wrap,
        // and two before the same record.
        let got = written(b"T", first, second, &[(0, b"0"), (2, b"2"), (4, b"4"), (6, b"6"), (6, b"6'")]);
        assert_eq!(got, b"T0ab2cd4ef66'gh");
        // At the wrap itself, and nothing published but what was copied.
        assert_eq!(written(b"", b"abcd", b"efgh", &[(4, b"|")]), b"abcd|efgh");
        assert_eq!(written(b"T", b"", b"", &[]), b"T");
    }
}

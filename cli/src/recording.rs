//! A recording given to `convert`, `report` or `export`: JSON lines, or a
//! perf.data file (ours, `perf record`'s, or one Microsoft's tools wrote),
//! read one record at a time either way.
//!
//! A perf.data file is told by its first bytes (`PERFILE2`, or the zeros
//! of one whose recorder never finished it), so its name does not matter.
//! Its events go through the consumer's attribution as they did while
//! recording ([`usertrace_consumer::archive`]), and become records as a
//! live `record` makes them ([`crate::records`]): our own archive converts
//! to the JSON lines the live recording printed.
//!
//! How far a file has been read goes to a [`Progress`]: the bytes taken
//! from a file of JSON lines, or how far into its records the perf.data
//! reader has come.

use std::collections::VecDeque;
use std::fmt;
use std::io::BufReader;
use std::path::Path;

use usertrace_consumer::archive::{ArchiveError, ArchiveReader};
use usertrace_output::jsonl::{self, Input, ReadError, Reader};
use usertrace_output::{ClockRecord, Record};

use usertrace_consumer::output_records::to_record;

use crate::progress::Progress;

/// The records of a recording, in order.
pub enum Recording {
    Lines(Reader<Input>),
    // The reader holds perf.data's headers and tables: boxed, as the
    // rarer and far larger of the two.
    Archive(Box<ArchiveRecords>),
}

/// Why a recording could not be read (to its end).
#[derive(Debug)]
pub enum RecordingError {
    Lines(ReadError),
    Archive(ArchiveError),
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordingError::Lines(e) => e.fmt(f),
            // The archive's errors name the file themselves.
            RecordingError::Archive(e) => e.fmt(f),
        }
    }
}

impl RecordingError {
    /// Whether the message already names the file.
    pub fn names_the_file(&self) -> bool {
        matches!(self, RecordingError::Archive(_))
    }
}

/// The message for `e`, with the input's name unless it gives it.
pub fn named(input: &str, e: &RecordingError) -> String {
    if e.names_the_file() {
        e.to_string()
    } else {
        format!("{input}: {e}")
    }
}

/// Opens the recording at `path` (`-`: JSON lines on standard input),
/// telling `progress` how far it has been read.
pub fn open(path: &Path, progress: &Progress) -> Result<Recording, RecordingError> {
    if path.as_os_str() == "-" {
        return jsonl::open(path).map(Recording::Lines).map_err(RecordingError::Lines);
    }
    if ArchiveReader::recognizes(path) {
        let reader = ArchiveReader::open(path).map_err(RecordingError::Archive)?;
        return Ok(Recording::Archive(Box::new(ArchiveRecords::new(reader, progress.clone()))));
    }
    // As jsonl::open opens a file, with what is read counted on the way.
    let file = std::fs::File::open(path).map_err(|source| RecordingError::Lines(ReadError::Open { path: path.to_owned(), source }))?;
    let input: Input = Box::new(BufReader::with_capacity(1 << 16, progress.counting(file)));
    Ok(Recording::Lines(Reader::new(input)))
}

impl Iterator for Recording {
    type Item = Result<Record, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Recording::Lines(lines) => lines.next().map(|r| r.map_err(RecordingError::Lines)),
            Recording::Archive(archive) => archive.next(),
        }
    }
}

/// A perf.data file's records: its clock first, as a JSON-lines archive
/// starts, then what each of its rounds releases.
pub struct ArchiveRecords {
    reader: ArchiveReader,
    ready: VecDeque<Record>,
    failed: bool,
    progress: Progress,
}

impl ArchiveRecords {
    fn new(reader: ArchiveReader, progress: Progress) -> ArchiveRecords {
        let clock = reader.clock().map(|(time_ns, unix_ns)| Record::Clock(ClockRecord { time_ns, unix_ns }));
        ArchiveRecords { reader, ready: clock.into_iter().collect(), failed: false, progress }
    }
}

impl Iterator for ArchiveRecords {
    type Item = Result<Record, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(record) = self.ready.pop_front() {
                return Some(Ok(record));
            }
            if self.failed {
                return None;
            }
            let round = self.reader.next_round();
            self.progress.set_position(self.reader.position());
            match round {
                Ok(Some(outputs)) => self.ready.extend(outputs.into_iter().filter_map(to_record)),
                Ok(None) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(RecordingError::Archive(e)));
                }
            }
        }
    }
}

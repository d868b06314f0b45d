//! The formats a recording can be written in, how one is chosen from a
//! file name, and writing a whole recording held in memory in one of them.

use std::io::Write;
use std::path::Path;

use clap::ValueEnum;
use usertrace_output::timeline::TimelineStream;
use usertrace_output::{chrome, jsonl, perfetto, AtomicFile, FileError, Record};

use crate::text::text_line;

/// What `record` and `convert` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// One line per event, as perf script prints it
    Text,
    /// JSON lines: events, processes, exits and losses (`.jsonl`)
    Json,
    /// A Perfetto trace for ui.perfetto.dev (`.pftrace`, `.perfetto-trace`)
    Perfetto,
    /// Chrome's Trace Event JSON for chrome://tracing or speedscope (`.json`)
    Chrome,
    /// perf.data, perf's own file, as the rings gave the records (`.data`):
    /// `record` writes it, `perf script` and every command here read it
    #[value(name = "perf-data")]
    PerfData,
}

impl TraceFormat {
    /// The format a file name asks for, by its extension.
    pub fn from_path(path: &Path) -> Option<TraceFormat> {
        match path.extension()?.to_str()? {
            "pftrace" | "perfetto-trace" => Some(TraceFormat::Perfetto),
            "json" => Some(TraceFormat::Chrome),
            "jsonl" => Some(TraceFormat::Json),
            "data" => Some(TraceFormat::PerfData),
            _ => None,
        }
    }

    /// Whether records can be written as they come (otherwise they are
    /// collected and written at the end).
    pub fn streams(self) -> bool {
        matches!(self, TraceFormat::Text | TraceFormat::Json)
    }
}

/// Appends `record` in a streaming format (text or JSON lines).
pub fn write_streamed(format: TraceFormat, record: &Record, out: &mut Vec<u8>) {
    match (format, record) {
        (TraceFormat::Text, Record::Event(e)) => text_line(e, out),
        (TraceFormat::Text, _) => {}
        _ => jsonl::write_record(record, out),
    }
}

/// The whole recording in `format`.
pub fn encode(format: TraceFormat, records: &[Record]) -> Vec<u8> {
    match format {
        TraceFormat::Perfetto | TraceFormat::Chrome => lay_out(format, records),
        // The session writes perf.data itself, from the rings: `record`
        // never collects records for it, and `convert` refuses to write it.
        TraceFormat::PerfData => unreachable!("perf.data is written by the session, not encoded from records"),
        TraceFormat::Text | TraceFormat::Json => {
            let mut out = Vec::new();
            for record in records {
                write_streamed(format, record, &mut out);
            }
            out
        }
    }
}

/// A Perfetto or Chrome trace of records held in memory, laid out by the
/// stream that `convert` lays out a file with, so that `record` and
/// `convert` write the same trace of the same records.
fn lay_out(format: TraceFormat, records: &[Record]) -> Vec<u8> {
    let mut timeline = TimelineStream::in_memory();
    let mut out = Vec::new();
    // In memory, into a Vec: nothing can fail.
    for record in Record::in_time_order(records).iter() {
        let _ = timeline.push(record);
    }
    if let Ok(items) = timeline.finish() {
        let _ = match format {
            TraceFormat::Chrome => chrome::write(items, &mut out),
            _ => perfetto::write(items, &mut out),
        };
    }
    out
}

/// Writes the whole recording to `path`, never leaving it half-written.
pub fn write_file(format: TraceFormat, records: &[Record], path: &Path) -> Result<(), FileError> {
    let bytes = encode(format, records);
    let mut file = AtomicFile::create(path)?;
    file.write_all(&bytes).map_err(|source| FileError { path: path.to_owned(), what: "writing failed", source })?;
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_chooses_the_format() {
        let of = |p: &str| TraceFormat::from_path(Path::new(p));
        assert_eq!(of("out.pftrace"), Some(TraceFormat::Perfetto));
        assert_eq!(of("/tmp/a.perfetto-trace"), Some(TraceFormat::Perfetto));
        assert_eq!(of("trace.json"), Some(TraceFormat::Chrome));
        assert_eq!(of("events.jsonl"), Some(TraceFormat::Json));
        assert_eq!(of("perf.data"), Some(TraceFormat::PerfData));
        assert_eq!(of("events.txt"), None);
        assert_eq!(of("events"), None);
    }
}

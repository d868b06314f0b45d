//! The formats a recording can be written in, how one is chosen from a
//! file name, and laying out a Perfetto or Chrome trace as records come.

use std::io::Write;
use std::path::{Path, PathBuf};

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

/// A Perfetto or Chrome trace laid out as records come, in bounded
/// memory: the timeline's sorted runs spill into temporary files in a
/// directory of the caller's choice (beside the output, on the disk that
/// must have room for it anyway). `record` and `convert` lay out their
/// traces with it, so that both write the same trace of the same records.
pub struct TimelineOut {
    format: TraceFormat,
    timeline: TimelineStream,
    sort_dir: PathBuf,
}

impl TimelineOut {
    /// A trace in `format` (Perfetto or Chrome), spilling into `sort_dir`.
    pub fn spilling_to(format: TraceFormat, sort_dir: PathBuf) -> TimelineOut {
        TimelineOut { format, timeline: TimelineStream::spilling_to(&sort_dir), sort_dir }
    }

    /// For a trace written to `file`: spills beside it, or in the
    /// temporary directory when it is written in place (a device, a FIFO,
    /// standard output), which may have no directory to write in.
    pub fn beside(format: TraceFormat, file: Option<&AtomicFile>) -> TimelineOut {
        let dir = file.and_then(AtomicFile::temporary_path).and_then(Path::parent).map_or_else(std::env::temp_dir, Path::to_owned);
        TimelineOut::spilling_to(format, dir)
    }

    /// Takes the next record, in the order the recording gives them.
    pub fn push(&mut self, record: &Record) -> Result<(), FileError> {
        self.timeline.push(record).map_err(|source| self.sort_failed(source))
    }

    /// Writes the whole trace, in time order, into `out`.
    pub fn write_to(self, out: &mut impl Write, path: &Path) -> Result<(), FileError> {
        let sort_dir = self.sort_dir.clone();
        let items = self.timeline.finish().map_err(|source| FileError { path: sort_dir, what: SORT_FAILED, source })?;
        let written = match self.format {
            TraceFormat::Chrome => chrome::write(items, out),
            _ => perfetto::write(items, out),
        };
        written.map_err(|source| FileError { path: path.to_owned(), what: "writing failed", source })
    }

    fn sort_failed(&self, source: std::io::Error) -> FileError {
        FileError { path: self.sort_dir.clone(), what: SORT_FAILED, source }
    }
}

const SORT_FAILED: &str = "cannot sort the timeline in a temporary file there";

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

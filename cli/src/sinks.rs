//! The outputs of a recording, each a [`Sink`], run as one list
//! ([`Sinks`]), as OpenTelemetry's span processors or perf's `struct
//! perf_tool` callbacks are.
//!
//! A sink takes the recording's records in time order and finishes. The
//! same sinks run live (`record`, `stat`, from the session) and from a
//! file (`convert`, `report`, `export`, from [`crate::recording`]), so a
//! recording and its file give the same outputs:
//! - [`Lines`]: text or JSON lines, written as records come;
//! - [`Timeline`]: a Perfetto or Chrome trace, laid out as records come in
//!   bounded memory and written at the end;
//! - [`ReportOut`]: the latency report, folded as records come;
//! - [`Otlp`]: OTLP export, tail sampling included, queued as records
//!   come and sent by the exporter's thread.
//!
//! No sink keeps the recording. A sink whose output fails stops taking
//! records and says why when the list finishes; the others go on, so one
//! full disk loses one output, not all of them.

use std::io::{BufWriter, StdoutLock, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use usertrace_consumer::output_records::{to_record, write_event_line};
use usertrace_consumer::{Event, Output};
use usertrace_output::jsonl::NamespacesJsonCache;
use usertrace_output::otlp::Exporter;
use usertrace_output::report::ReportBuilder;
use usertrace_output::{AtomicFile, FileError, Record};

use crate::args::Format;
use crate::json::print_line;
use crate::stdout::{out, reader_gone};
use crate::trace_format::{write_streamed, TimelineOut, TraceFormat};

/// Why an output could not be completed.
#[derive(Debug)]
pub struct SinkError {
    pub message: String,
    /// It was standard output, and its reader has gone (`| head`): not a
    /// failure of the command, which then ends quietly.
    pub reader_gone: bool,
}

impl SinkError {
    fn writing(what: &str, e: &std::io::Error, to: &Destination) -> SinkError {
        SinkError { message: format!("{what} failed: {e}"), reader_gone: to.is_standard_output() && reader_gone(e) }
    }

    fn file(e: FileError, to: &Destination) -> SinkError {
        SinkError { reader_gone: to.is_standard_output() && reader_gone(&e.source), message: e.to_string() }
    }
}

/// One output of a recording.
pub trait Sink {
    /// Takes the next record, in the recording's time order. After an
    /// error the sink is given nothing more.
    fn push(&mut self, record: &Record) -> Result<(), SinkError>;

    /// Writes a live event with no [`Record`] made for it, where the sink
    /// can (JSON lines, written from the event itself); `None` where it
    /// cannot. `Some(Ok(true))`: written, and its payload could not be
    /// decoded. Asked only of a sink that is the only one.
    fn write_event(&mut self, _event: &Event) -> Option<Result<bool, SinkError>> {
        None
    }

    /// Completes the output: puts its file in place, prints it, or sends
    /// what is queued; `say` takes each line it has to say besides.
    fn finish(self: Box<Self>, say: &mut dyn FnMut(&str)) -> Result<(), SinkError>;
}

/// The list of a command's sinks.
#[derive(Default)]
pub struct Sinks {
    sinks: Vec<(Box<dyn Sink>, Option<SinkError>)>,
    undecodable: u64,
}

impl Sinks {
    pub fn add(&mut self, sink: impl Sink + 'static) {
        self.sinks.push((Box::new(sink), None));
    }

    /// Whether any sink looks at the events: with none, the session only
    /// counts them.
    pub fn want_events(&self) -> bool {
        !self.sinks.is_empty()
    }

    /// Hands `record` to every sink that has not failed.
    pub fn push(&mut self, record: &Record) {
        if matches!(record, Record::Event(e) if e.error.is_some()) {
            self.undecodable += 1;
        }
        for (sink, failed) in self.sinks.iter_mut().filter(|(_, failed)| failed.is_none()) {
            *failed = sink.push(record).err();
        }
    }

    /// Hands every record of a recording read from a file to the sinks,
    /// until one fails; returns how many there were, or the first read
    /// error (nothing after it is read).
    pub fn push_all<E>(&mut self, records: impl IntoIterator<Item = Result<Record, E>>) -> Result<u64, E> {
        let mut count = 0;
        for record in records {
            self.push(&record?);
            count += 1;
            if self.failed().is_some() {
                break;
            }
        }
        Ok(count)
    }

    /// Hands one of a live session's outputs to every sink: as the record
    /// it makes, or, to a sink alone that can write it so, as the event.
    pub fn push_output(&mut self, output: Output) {
        if let ([(sink, failed @ None)], Output::Event(event)) = (self.sinks.as_mut_slice(), &output) {
            if let Some(written) = sink.write_event(event) {
                match written {
                    Ok(undecodable) => self.undecodable += u64::from(undecodable),
                    Err(e) => *failed = Some(e),
                }
                return;
            }
        }
        if let Some(record) = to_record(output) {
            self.push(&record);
        }
    }

    /// The first failure of a sink, if one has failed: a command that
    /// reads a file stops there.
    pub fn failed(&self) -> Option<&SinkError> {
        self.sinks.iter().find_map(|(_, failed)| failed.as_ref())
    }

    /// How many events could not be decoded (each is written with its
    /// error, and an EventHeader one with its payload as `raw`).
    pub fn undecodable(&self) -> u64 {
        self.undecodable
    }

    /// Finishes every sink in the order they were added, even after one
    /// has failed; `say` takes each line they have to say, failures
    /// included. Returns whether all completed; an output whose
    /// only failure is a reader of standard output that has gone counts as
    /// completed.
    pub fn finish(self, mut say: impl FnMut(&str)) -> bool {
        let mut completed = true;
        for (sink, failed) in self.sinks {
            let outcome = match failed {
                // A failed output is not completed: its file, if any, is
                // dropped here, and with it what it had.
                Some(e) => Err(e),
                None => sink.finish(&mut say),
            };
            match outcome {
                Ok(()) => {}
                Err(e) if e.reader_gone => {}
                Err(e) => {
                    say(&e.message);
                    completed = false;
                }
            }
        }
        completed
    }
}

/// Where an output goes: standard output, or a file that appears only
/// once complete.
pub enum Destination {
    Stdout(BufWriter<StdoutLock<'static>>),
    File(AtomicFile),
}

impl Destination {
    pub fn stdout() -> Destination {
        Destination::Stdout(BufWriter::new(std::io::stdout().lock()))
    }

    /// The file `path`, as [`AtomicFile`] takes it: a FIFO, a device or
    /// `-` is written in place.
    pub fn create(path: &Path) -> Result<Destination, FileError> {
        AtomicFile::create(path).map(Destination::File)
    }

    /// Whether it writes to standard output: the terminal's, or `-o -`.
    fn is_standard_output(&self) -> bool {
        self.file().is_none_or(|file| file.destination().as_os_str() == "-")
    }

    fn file(&self) -> Option<&AtomicFile> {
        match self {
            Destination::File(file) => Some(file),
            Destination::Stdout(_) => None,
        }
    }

    fn shown(&self) -> PathBuf {
        self.file().map_or_else(|| PathBuf::from("-"), |f| f.destination().to_owned())
    }

    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Destination::Stdout(out) => out,
            Destination::File(file) => file,
        }
    }

    fn complete(self) -> Result<(), SinkError> {
        let standard_output = self.is_standard_output();
        match self {
            Destination::Stdout(mut out) => out.flush().map_err(|e| SinkError { message: format!("writing events failed: {e}"), reader_gone: reader_gone(&e) }),
            Destination::File(file) => file.commit().map_err(|e| SinkError { reader_gone: standard_output && reader_gone(&e.source), message: e.to_string() }),
        }
    }
}

/// Bytes of lines gathered for one write.
const WRITE_SIZE: usize = 64 * 1024;

/// Text or JSON lines, written as records come.
pub struct Lines {
    format: TraceFormat,
    to: Destination,
    lines: Vec<u8>,
    /// Bytes gathered before a write: none for a terminal or pipe that a
    /// live recording writes to, which gets each line as it comes.
    gather: usize,
    /// Whether the recording's clock reading is written as a line: always
    /// in a file, which `export` dates its events by; not on a live
    /// terminal, whose reader has the clock.
    clock_line: bool,
    namespaces_json: NamespacesJsonCache,
}

impl Lines {
    /// Lines of a live recording.
    pub fn live(format: TraceFormat, to: Destination) -> Lines {
        // `-o -` is a file too: a recording's file, written in place.
        let in_file = matches!(to, Destination::File(_));
        Lines::new(format, to, if in_file { WRITE_SIZE } else { 0 }, in_file)
    }

    /// Lines of a recording read from a file, gathered into large writes
    /// wherever they go.
    pub fn from_file(format: TraceFormat, to: Destination) -> Lines {
        Lines::new(format, to, WRITE_SIZE, true)
    }

    fn new(format: TraceFormat, to: Destination, gather: usize, clock_line: bool) -> Lines {
        Lines { format, to, lines: Vec::with_capacity(gather * 2), gather, clock_line, namespaces_json: NamespacesJsonCache::default() }
    }

    fn write(&mut self, at_least: usize) -> Result<(), SinkError> {
        if self.lines.len() < at_least {
            return Ok(());
        }
        let written = self.to.writer().write_all(&self.lines);
        self.lines.clear();
        written.map_err(|e| SinkError::writing("writing events", &e, &self.to))
    }
}

impl Sink for Lines {
    fn push(&mut self, record: &Record) -> Result<(), SinkError> {
        if matches!(record, Record::Clock(_)) && !self.clock_line {
            return Ok(());
        }
        write_streamed(self.format, record, &mut self.lines);
        self.write(self.gather)
    }

    fn write_event(&mut self, event: &Event) -> Option<Result<bool, SinkError>> {
        if self.format != TraceFormat::Json {
            return None;
        }
        let undecodable = write_event_line(event, &mut self.namespaces_json, &mut self.lines);
        Some(self.write(self.gather).map(|()| undecodable))
    }

    fn finish(mut self: Box<Self>, _: &mut dyn FnMut(&str)) -> Result<(), SinkError> {
        self.write(0)?;
        self.to.complete()
    }
}

/// A Perfetto or Chrome trace: laid out as records come, spilling sorted
/// runs beside its file, and written in time order at the end.
pub struct Timeline {
    timeline: TimelineOut,
    to: Destination,
}

impl Timeline {
    pub fn new(format: TraceFormat, to: Destination) -> Timeline {
        Timeline { timeline: TimelineOut::beside(format, to.file()), to }
    }
}

impl Sink for Timeline {
    fn push(&mut self, record: &Record) -> Result<(), SinkError> {
        self.timeline.push(record).map_err(|e| SinkError::file(e, &self.to))
    }

    fn finish(self: Box<Self>, _: &mut dyn FnMut(&str)) -> Result<(), SinkError> {
        let Timeline { timeline, mut to } = *self;
        let shown = to.shown();
        timeline.write_to(&mut to.writer(), &shown).map_err(|e| SinkError::file(e, &to))?;
        to.complete()
    }
}

/// Where the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportTo {
    Stdout,
    /// Beside a recording's own output on standard output, the report
    /// goes to the terminal's other stream.
    Stderr,
}

/// The latency report: each record folded as it comes, printed at the end.
pub struct ReportOut {
    report: ReportBuilder,
    to: ReportTo,
    format: Format,
}

impl ReportOut {
    pub fn new(to: ReportTo, format: Format) -> ReportOut {
        ReportOut { report: ReportBuilder::new(), to, format }
    }
}

impl Sink for ReportOut {
    fn push(&mut self, record: &Record) -> Result<(), SinkError> {
        self.report.push(record);
        Ok(())
    }

    fn finish(self: Box<Self>, _: &mut dyn FnMut(&str)) -> Result<(), SinkError> {
        let report = self.report.finish();
        match (self.format, self.to) {
            (Format::Json, _) => print_line(&report),
            (Format::Text, ReportTo::Stdout) => out!("{report}"),
            (Format::Text, ReportTo::Stderr) => eprint!("{report}"),
        }
        Ok(())
    }
}

/// OTLP export: each record queued for the exporter's thread.
pub struct Otlp {
    exporter: Exporter,
    pace: Pace,
}

/// How records reach the exporter, and what the export's end means.
enum Pace {
    /// A live recording, which never waits on the network: what does not
    /// fit the queue is dropped and counted. The recording's outcome is
    /// its command's; the export's is said, and given `grace` to end.
    Live { grace: Duration },
    /// A file, whose reading waits for room in the queue, for at most
    /// `patience`; past that the endpoint is taken to be away, and the
    /// rest is only counted. The export fails unless the endpoint took
    /// every event.
    FromFile { name: String, patience: Duration, stalled: bool, never_sent: u64 },
}

impl Otlp {
    pub fn live(exporter: Exporter, grace: Duration) -> Otlp {
        Otlp { exporter, pace: Pace::Live { grace } }
    }

    /// For the recording `name`, read from a file.
    pub fn from_file(exporter: Exporter, name: &str, patience: Duration) -> Otlp {
        Otlp { exporter, pace: Pace::FromFile { name: name.to_owned(), patience, stalled: false, never_sent: 0 } }
    }
}

impl Sink for Otlp {
    fn push(&mut self, record: &Record) -> Result<(), SinkError> {
        match &mut self.pace {
            Pace::Live { .. } => self.exporter.push(record.clone()),
            Pace::FromFile { patience, stalled, never_sent, .. } => {
                if *stalled || self.exporter.push_blocking(record.clone(), *patience).is_err() {
                    *stalled = true;
                    *never_sent += u64::from(matches!(record, Record::Event(_)));
                }
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>, say: &mut dyn FnMut(&str)) -> Result<(), SinkError> {
        let Otlp { exporter, pace } = *self;
        let (name, patience, stalled, never_sent) = match pace {
            Pace::Live { grace } => {
                say(&exporter.finish(grace).to_string());
                return Ok(());
            }
            Pace::FromFile { name, patience, stalled, never_sent } => (name, patience, stalled, never_sent),
        };
        let mut summary = exporter.finish(if stalled { Duration::ZERO } else { patience });
        summary.recorded_events += never_sent;
        summary.dropped_events += never_sent;
        if stalled {
            say(&format!("the endpoint took nothing for {} s, so the rest of {name} ({never_sent} events) was not sent", patience.as_secs()));
        }
        if !summary.all_accounted_as_sent() {
            return Err(SinkError { message: summary.to_string(), reader_gone: false });
        }
        // Quiet hides the counts only when the endpoint took every event.
        if crate::verbosity::notes() {
            say(&summary.to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use usertrace_output::{ClockRecord, ExitRecord};

    use super::*;

    /// What a test sink was given and did, shared with the test.
    #[derive(Default)]
    struct Log {
        pushed: Vec<u64>,
        finished: bool,
    }

    /// Takes records, failing at the `fail_at`th (from 1) if asked to.
    struct Probe {
        log: Rc<RefCell<Log>>,
        fail_at: Option<usize>,
        reader_gone: bool,
    }

    impl Sink for Probe {
        fn push(&mut self, record: &Record) -> Result<(), SinkError> {
            let mut log = self.log.borrow_mut();
            log.pushed.push(record.time_ns());
            if self.fail_at == Some(log.pushed.len()) {
                return Err(SinkError { message: "disk full".into(), reader_gone: self.reader_gone });
            }
            Ok(())
        }

        fn finish(self: Box<Self>, say: &mut dyn FnMut(&str)) -> Result<(), SinkError> {
            self.log.borrow_mut().finished = true;
            say("finished");
            Ok(())
        }
    }

    fn probe(fail_at: Option<usize>, reader_gone: bool) -> (Probe, Rc<RefCell<Log>>) {
        let log = Rc::default();
        (Probe { log: Rc::clone(&log), fail_at, reader_gone }, log)
    }

    fn exit(time_ns: u64) -> Record {
        Record::Exit(ExitRecord { time_ns, pid: 7, tid: 7 })
    }

    #[test]
    fn a_sink_that_fails_is_given_nothing_more_and_the_others_go_on_to_the_end() {
        let (failing, failing_log) = probe(Some(2), false);
        let (healthy, healthy_log) = probe(None, false);
        let mut sinks = Sinks::default();
        sinks.add(failing);
        sinks.add(healthy);
        for t in 1..=3 {
            sinks.push(&exit(t));
        }
        assert_eq!(sinks.failed().map(|e| e.message.as_str()), Some("disk full"));
        let mut said = Vec::new();
        assert!(!sinks.finish(|line| said.push(line.to_owned())), "one output failed");
        assert_eq!(failing_log.borrow().pushed, [1, 2]);
        assert!(!failing_log.borrow().finished, "a failed output is dropped, not completed");
        assert_eq!(healthy_log.borrow().pushed, [1, 2, 3]);
        assert!(healthy_log.borrow().finished);
        assert_eq!(said, ["disk full", "finished"], "in the order the sinks were added");
    }

    #[test]
    fn a_reader_of_standard_output_that_has_gone_is_no_failure() {
        let (gone, _) = probe(Some(1), true);
        let mut sinks = Sinks::default();
        sinks.add(gone);
        sinks.push(&exit(1));
        let mut said = Vec::new();
        assert!(sinks.finish(|line| said.push(line.to_owned())));
        assert!(said.is_empty(), "{said:?}");
    }

    #[test]
    fn with_no_sink_nobody_wants_the_events() {
        let mut sinks = Sinks::default();
        assert!(!sinks.want_events());
        sinks.add(probe(None, false).0);
        assert!(sinks.want_events());
    }

    fn lines_written(make: impl Fn(Destination) -> Lines) -> String {
        static WRITTEN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = WRITTEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("usertrace-sinks-test-{}-{n}.jsonl", std::process::id()));
        let mut sinks = Sinks::default();
        sinks.add(make(Destination::create(&path).unwrap()));
        sinks.push(&Record::Clock(ClockRecord { time_ns: 5, unix_ns: 1_700_000_000_000_000_000 }));
        sinks.push(&exit(6));
        assert!(!path.exists(), "a file appears only once complete");
        assert!(sinks.finish(|line| panic!("{line}")));
        let written = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        written
    }

    #[test]
    fn json_lines_in_a_file_start_with_the_clock_line_live_and_from_a_file_alike() {
        let live = lines_written(|to| Lines::live(TraceFormat::Json, to));
        assert_eq!(live, lines_written(|to| Lines::from_file(TraceFormat::Json, to)));
        let lines: Vec<serde_json::Value> = live.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2, "{live}");
        assert_eq!(lines[0]["type"], "clock");
        assert_eq!(lines[1]["type"], "exit");
    }
}

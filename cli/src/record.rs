//! `usertrace record`: record events with who emitted them, and print or
//! write them as text, JSON lines, a Perfetto trace or Chrome trace JSON.
//!
//! text and JSON lines are written as events come (text as in
//! [`crate::text`]; JSON lines as documented in `usertrace_output::jsonl`);
//! Perfetto and Chrome traces are laid out as events come, in bounded
//! memory (sorted runs spill beside the output, as `convert` does), and
//! written at the end; the `--report` folds each record as it comes. A
//! file given with
//! `-o` is checked for writability before recording starts, and appears
//! only once complete.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use usertrace_consumer::archive::ArchiveOptions;
use usertrace_consumer::Stacks;
use usertrace_output::otlp::Exporter;
use usertrace_output::{check_writable, AtomicFile, ClockRecord, FileError, Record};

use crate::config_file::ConfigFile;
use crate::flight::{run_flight, FlightArgs};
use crate::otlp_args::{OtlpArgs, RECORD_GRACE};
use crate::args::Format;
use crate::run::{print_summary, run, Recording, RunArgs};
use crate::sinks::{Destination, Lines, Otlp, ReportOut, ReportTo, Sinks, Timeline};
use crate::trace_format::TraceFormat;
use crate::verbosity::say;

/// What `usertrace help record` shows after the options.
const OUTPUT_HELP: &str = "\
Output (--format, or from the extension of -o FILE):
  text      COMM PID/TID [CPU] SECONDS.MICROS: EVENT: field=value ...
            as perf script prints it. In strings, newline, CR, tab and
            backslash are written \\n \\r \\t \\\\, other control characters
            \\xNN or \\u{NN}, so that one event is one line.
  json      (.jsonl) one object per line, each with its \"type\": event
            lines (time_ns, cpu, pid, tid, comm, process, namespaces where
            the session may see them: root or CAP_PERFMON, event, fields in
            declaration order, error if the payload could not be decoded,
            stack with --call-graph fp: its frames, innermost first),
            process lines (pid, executable, command_line), exit lines (pid,
            tid) and lost lines (cpu, count, sideband).
  perfetto  (.pftrace, .perfetto-trace) a Perfetto trace: open it in
            ui.perfetto.dev. Spans (events whose first field is span_begin /
            span_end, or span_start_ns and span_duration_ns) are slices.
  chrome    (.json) Trace Event JSON for chrome://tracing or speedscope.
  perf-data (.data) perf.data, perf's own file: every record as the rings
            gave it, with the formats of the events, so that
            `perf script -i FILE.data` reads it, and `usertrace convert`,
            `report` and `export` take it like a .jsonl. It holds every
            process's events (-p chooses only what else is printed or
            sent), and each process's executable and command line as
            usertrace:process events. Until recording ends it is written
            beside FILE as .FILE.XXXXXX.usertrace.tmp; a recorder killed
            with SIGKILL leaves that, which convert calls incomplete.
  Other extensions: text, unless --format says otherwise.

OTLP export (--otlp URL, or --config FILE): events and spans are also
sent live to an OpenTelemetry endpoint; with neither -o nor --format,
nothing is printed. Sending never holds up recording: while the endpoint
is slow or down, records queue up to a memory cap, past which the oldest
batches are dropped; the summary on stderr counts what was exported,
dropped and failed. A bad URL or setting is refused (exit status 2)
before recording starts. With --tail, only the traces holding a slow or
a failed span are sent; the rest are counted and dropped.

Without CMD, recording goes on until Ctrl-C (or --duration); the exit
status is then 0. With CMD, it is CMD's own, or 127 if CMD cannot start.";

/// Record events as they happen (text, JSON lines, Perfetto or Chrome trace)
///
/// Records the user_events matching each PATTERN on every CPU, in time
/// order, each with the thread and process that emitted it. With CMD, runs
/// it (held until recording has started), records until it exits and
/// exits with its status; otherwise records until Ctrl-C.
#[derive(Debug, Args)]
#[command(after_long_help = OUTPUT_HELP)]
pub struct RecordArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Write to FILE instead of stdout; its extension chooses the format
    /// (.pftrace, .perfetto-trace, .json, .jsonl, .data) unless --format is
    /// given. FILE appears only once complete. Give -o twice to write a
    /// perf.data archive (FILE.data) and one other output of the same
    /// session
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Vec<PathBuf>,

    /// text, json (JSON lines), perfetto, chrome or perf-data [default:
    /// from -o's extension, else text]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<TraceFormat>,

    /// At the end, print the latency report (event rates, span duration
    /// percentiles and histograms, per process): on stdout with -o, else
    /// on stderr
    #[arg(long)]
    pub report: bool,

    /// Also record each event's user stack, as perf's --call-graph fp
    /// does: walked by frame pointers (the program and its libraries
    /// built with -fno-omit-frame-pointer, or Rust's
    /// -C force-frame-pointers=yes), up to 127 frames. Frames are named
    /// (function, and file:line where there is debug information) in the
    /// JSON lines' `stack`, in Perfetto as each event's and span begin's
    /// callstack, and later by convert from a perf.data file. fp is the
    /// only MODE; events over shared memory and --sched's records carry no
    /// stack. Every recorded event's, unless --call-graph-events or
    /// --call-graph-spans chooses
    #[arg(long = "call-graph", value_name = "MODE", value_parser = parse_call_graph)]
    pub call_graph: Option<CallGraph>,

    /// With --call-graph, only the events matching PATTERN (as -e takes
    /// them) carry their stack; repeat it or separate patterns with commas
    #[arg(
        long = "call-graph-events",
        value_name = "PATTERN",
        requires = "call_graph",
        conflicts_with = "call_graph_spans",
        value_delimiter = ',',
        value_parser = crate::run::parse_pattern
    )]
    pub call_graph_events: Vec<String>,

    /// With --call-graph, only span begins (events whose first field is
    /// span_begin) carry their stack: what began each span
    #[arg(long = "call-graph-spans", requires = "call_graph")]
    pub call_graph_spans: bool,

    // What export does to the output is in OUTPUT_HELP: clap shows no
    // doc comment of a flattened group.
    #[command(flatten, next_help_heading = "OTLP export")]
    pub otlp: OtlpArgs,

    #[command(flatten, next_help_heading = "Flight recorder")]
    pub flight: FlightArgs,
}

/// How stacks are walked: `--call-graph MODE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGraph {
    /// By frame pointers, in the kernel, at each event.
    Fp,
}

impl RecordArgs {
    /// Which events carry their stack, as --call-graph and its choices say.
    pub fn stacks(&self) -> Stacks {
        match (self.call_graph, self.call_graph_spans, self.call_graph_events.as_slice()) {
            (None, ..) => Stacks::None,
            (Some(CallGraph::Fp), true, _) => Stacks::SpanBegins,
            (Some(CallGraph::Fp), false, []) => Stacks::All,
            (Some(CallGraph::Fp), false, patterns) => Stacks::Matching(patterns.to_vec()),
        }
    }
}

/// `fp`; perf's other modes are refused by name, with what to do instead.
fn parse_call_graph(mode: &str) -> Result<CallGraph, String> {
    match mode {
        "fp" => Ok(CallGraph::Fp),
        "dwarf" | "lbr" => Err(format!(
            "{mode} is not supported: usertrace walks stacks by frame pointers only (--call-graph fp); \
             build the program with -fno-omit-frame-pointer"
        )),
        other if other.starts_with("dwarf,") || other.starts_with("fp,") => {
            Err(format!("{other}: no size or depth is taken; the supported mode is fp (up to 127 frames)"))
        }
        other => Err(format!("{other} is no call-graph mode; the supported mode is fp")),
    }
}

/// Where a recording goes, from -o and --format.
#[derive(Debug, PartialEq)]
pub struct Outputs<'a> {
    /// The perf.data archive, which the session writes itself.
    pub archive: Option<&'a Path>,
    /// The other output: a file, or standard output when None.
    pub output: Option<&'a Path>,
    /// The format of `output`; `PerfData` when the archive is the only -o.
    pub format: TraceFormat,
}

impl RecordArgs {
    /// The archive and the other output: -o once (whose format is
    /// --format, else its extension, else text), or twice, one of them a
    /// FILE.data, the format then the other's. Otherwise, why not.
    pub fn outputs(&self) -> Result<Outputs<'_>, String> {
        let format_of = |path: Option<&Path>| self.format.or_else(|| path.and_then(TraceFormat::from_path)).unwrap_or(TraceFormat::Text);
        match self.output.as_slice() {
            [] => Ok(Outputs { archive: None, output: None, format: format_of(None) }),
            [one] => match format_of(Some(one)) {
                TraceFormat::PerfData => Ok(Outputs { archive: Some(one), output: None, format: TraceFormat::PerfData }),
                format => Ok(Outputs { archive: None, output: Some(one), format }),
            },
            [a, b] => {
                let is_archive = |p: &Path| TraceFormat::from_path(p) == Some(TraceFormat::PerfData);
                let (archive, other) = match (is_archive(a), is_archive(b)) {
                    (true, false) => (a, b),
                    (false, true) => (b, a),
                    _ => return Err("-o twice takes one FILE.data (the perf.data archive) and one other output".into()),
                };
                match format_of(Some(other)) {
                    TraceFormat::PerfData => Err("--format perf-data with two -o: name the archive FILE.data and the other output by its format".into()),
                    format => Ok(Outputs { archive: Some(archive), output: Some(other), format }),
                }
            }
            _ => Err("-o at most twice: one perf.data archive (FILE.data) and one other output".into()),
        }
    }
}

/// `args.run`, with `[record] containers` of the --config file where the
/// command line gave no --containers (the command line wins, as it does
/// for every key). Err: the exit status of a bad selector, said.
fn with_configured_containers(args: &RecordArgs) -> Result<std::borrow::Cow<'_, RunArgs>, ExitCode> {
    let Some(path) = args.otlp.config.as_deref().filter(|_| args.run.containers.is_empty()) else {
        return Ok(std::borrow::Cow::Borrowed(&args.run));
    };
    let file = ConfigFile::read(path).map_err(|e| {
        say!("usertrace record: {e}");
        ExitCode::from(2)
    })?;
    let containers = file.containers().map_err(|e| {
        say!("usertrace record: [record] containers in the config file {}: {e}", path.display());
        ExitCode::from(2)
    })?;
    Ok(std::borrow::Cow::Owned(RunArgs { containers, ..args.run.clone() }))
}

pub fn run_record(args: &RecordArgs) -> ExitCode {
    if args.flight.options().is_some() {
        return record_flight(args);
    }
    // Checked before recording starts, like -o: a bad URL is no reason to
    // find out after the fact.
    let exporter = match args.otlp.start_exporter("record") {
        Ok(exporter) => exporter,
        Err(code) => return code,
    };
    let outputs = match checked_outputs(args) {
        Ok(outputs) => outputs,
        Err(code) => return code,
    };
    // One reading of the clocks, for both files of a session that writes
    // two: the archive's CLOCK_DATA and the recording's clock line.
    let clock = crate::clock::now();
    // perf.data is written by the session itself, into a temporary file
    // that is put in place once complete.
    let (archive_file, archive) = match outputs.archive.map(|path| open_archive(path, &clock)).transpose() {
        Ok(opened) => opened.unzip(),
        Err(message) => {
            say!("usertrace record: {message}");
            return ExitCode::from(1);
        }
    };
    let mut sinks = match sinks_of(args, &outputs, exporter) {
        Ok(sinks) => sinks,
        Err(e) => {
            say!("usertrace record: {e}");
            return ExitCode::from(1);
        }
    };
    // Every output starts where a recording's file does, at its clock
    // line, so that live and `convert` or `report` of the file give the same.
    sinks.push(&Record::Clock(clock));
    // With the archive alone, nothing reads the events: the session only
    // counts them (those that still come, with -p, are in the archive).
    let recording = match archive {
        Some(archive) if !sinks.want_events() => Recording::ArchiveOnly(archive),
        Some(archive) => Recording::Archive(archive),
        None => Recording::Live,
    };
    let run_args = match with_configured_containers(args) {
        Ok(run_args) => run_args,
        Err(code) => return code,
    };
    let summary = match run(&run_args, "record", recording, args.stacks(), |output| sinks.push_output(output)) {
        Ok(summary) => summary,
        // The temporary files, if any, go with the sinks.
        Err(code) => return code,
    };
    print_summary("record", &summary);
    if sinks.undecodable() > 0 {
        say!("usertrace record: {} events could not be decoded; each is written with its error, an EventHeader one with its payload as `raw`", sinks.undecodable());
    }
    let archived = archive_file.is_none_or(|file| file.commit().map_err(|e| say!("usertrace record: {e}")).is_ok());
    let completed = sinks.finish(|line| say!("usertrace record: {line}"));
    if archived && completed {
        summary.exit
    } else {
        ExitCode::from(1)
    }
}

/// The flight recorder, or rotation: perf.data files named after the one
/// `-o PATH.data`, and no other output.
fn record_flight(args: &RecordArgs) -> ExitCode {
    let flag = if args.flight.flight_recorder.is_some() { "--flight-recorder" } else { "--switch-output" };
    if args.call_graph.is_some() {
        say!("usertrace record: --call-graph is not available with {flag} yet: record stacks into -o FILE.data instead");
        return ExitCode::from(2);
    }
    match (args.outputs(), args.flight.options()) {
        (Ok(Outputs { archive: Some(archive), output: None, .. }), Some(options)) if !args.otlp.enabled() && !args.report => {
            run_flight(&args.run, &args.flight, archive, options)
        }
        _ => {
            say!(
                "usertrace record: {flag} writes perf.data files named after -o PATH.data, \
                 and nothing else: give one -o PATH.data, without other outputs, --otlp or --report"
            );
            ExitCode::from(2)
        }
    }
}

/// The outputs -o and --format ask for, if the recording can write them;
/// each file checked for writability now, not after a recording that
/// could not be saved. Err: the exit status, the reason said.
fn checked_outputs(args: &RecordArgs) -> Result<Outputs<'_>, ExitCode> {
    let outputs = args.outputs().map_err(|message| {
        say!("usertrace record: {message}");
        ExitCode::from(2)
    })?;
    if outputs.format == TraceFormat::Perfetto && outputs.output.is_none() {
        say!("usertrace record: a Perfetto trace is a binary file: give it a name with -o FILE.pftrace");
        return Err(ExitCode::from(2));
    }
    let unnamed_archive = outputs.format == TraceFormat::PerfData && outputs.archive.is_none();
    if unnamed_archive || outputs.archive.is_some_and(|p| p.as_os_str() == "-") {
        say!("usertrace record: perf.data is a binary file that is written out of order: give it a name with -o FILE.data");
        return Err(ExitCode::from(2));
    }
    for path in &args.output {
        if let Err(e) = check_writable(path) {
            say!("usertrace record: {e}");
            return Err(ExitCode::from(1));
        }
    }
    Ok(outputs)
}

/// The sinks the arguments ask for, besides the archive the session
/// writes: the export first, so that its queue gets each record before
/// anything slower; then the output, on standard output when no file
/// names it (unless --otlp alone, which prints nothing); then the report.
fn sinks_of(args: &RecordArgs, outputs: &Outputs<'_>, exporter: Option<Exporter>) -> Result<Sinks, FileError> {
    let mut sinks = Sinks::default();
    let prints = exporter.is_none() || !args.output.is_empty() || args.format.is_some();
    if let Some(exporter) = exporter {
        sinks.add(Otlp::live(exporter, RECORD_GRACE));
    }
    let destination = match outputs.output {
        _ if outputs.format == TraceFormat::PerfData => None,
        Some(path) => Some(Destination::create(path)?),
        None => prints.then(Destination::stdout),
    };
    match (destination, outputs.format) {
        (Some(to), format) if format.streams() => sinks.add(Lines::live(format, to)),
        (Some(to), format) => sinks.add(Timeline::new(format, to)),
        (None, _) => {}
    }
    if args.report {
        // On standard output with -o, which leaves it free; else beside
        // the events, on the terminal's other stream.
        sinks.add(ReportOut::new(if args.output.is_empty() { ReportTo::Stderr } else { ReportTo::Stdout }, Format::Text));
    }
    Ok(sinks)
}

/// The temporary file beside `path` that perf.data is written into (by
/// the session, or a flight recorder's dump), and the archive options for
/// it; or why not.
pub(crate) fn open_archive(path: &Path, clock: &ClockRecord) -> Result<(AtomicFile, ArchiveOptions), String> {
    let file = AtomicFile::create(path).map_err(|e| e.to_string())?;
    let Some(temporary) = file.temporary_path() else {
        return Err(format!(
            "{}: perf.data must be a regular file: its headers are written last, at its start; \
             record to a file and read it from there, or use --format json for a pipe or device",
            path.display()
        ));
    };
    let options = ArchiveOptions { path: temporary.to_owned(), shown_as: path.to_owned(), clock: (clock.time_ns, clock.unix_ns) };
    Ok((file, options))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use usertrace::wire::dyn_loc;
    use usertrace_consumer::{Event, EventFormat, FieldValue, Namespaces};
    use usertrace_consumer::output_records::{event_record, write_event_line};
    use usertrace_output::jsonl::{write_record, NamespacesJsonCache};

    use crate::text::text_line;

    use super::*;

    fn event() -> Event {
        let format = EventFormat::parse(
            "user_events",
            "name: ping\nID: 9\n\tfield:u32 n;\toffset:8;\tsize:4;\tsigned:0;\n\
             \tfield:__rel_loc char msg[1];\toffset:12;\tsize:4;\tsigned:1;\n\
             \tfield:struct f64 x;\toffset:16;\tsize:8;\tsigned:0;\n",
        )
        .unwrap();
        let mut raw = vec![0u8; 8];
        raw.extend_from_slice(&12u32.to_ne_bytes());
        raw.extend_from_slice(&dyn_loc(8, 6).to_ne_bytes());
        raw.extend_from_slice(&f64::NAN.to_bits().to_ne_bytes());
        raw.extend_from_slice(b"a\"b\n\0");
        raw.push(0);
        Event {
            time_ns: 12_345_678_901,
            cpu: 1,
            pid: 10,
            tid: 11,
            comm: "worker".into(),
            process: "server".into(),
            namespaces: None,
            format: Arc::new(format),
            raw: raw.into(),
            stack: Box::default(),
        }
    }

    /// An event of every value kind: u64 `a`, s64 `b`, bool `e`, f32 `f`,
    /// f64 `g`, string `s`, bytes `j`.
    fn every_kind(a: u64, b: i64, e: u8, f: f32, g: f64, s: &str, j: &[u8]) -> Event {
        let format = EventFormat::parse(
            "user_events",
            "name: kinds\nID: 7\n\tfield:u64 a;\toffset:8;\tsize:8;\tsigned:0;\n\
             \tfield:s64 b;\toffset:16;\tsize:8;\tsigned:1;\n\
             \tfield:unsigned char e;\toffset:24;\tsize:1;\tsigned:0;\n\
             \tfield:struct f32 f;\toffset:25;\tsize:4;\tsigned:0;\n\
             \tfield:struct f64 g;\toffset:29;\tsize:8;\tsigned:0;\n\
             \tfield:__rel_loc char s[];\toffset:37;\tsize:4;\tsigned:1;\n\
             \tfield:__rel_loc u8 j[];\toffset:41;\tsize:4;\tsigned:0;\n",
        )
        .unwrap();
        let mut raw = vec![0u8; 8];
        raw.extend_from_slice(&a.to_ne_bytes());
        raw.extend_from_slice(&b.to_ne_bytes());
        raw.push(e);
        raw.extend_from_slice(&f.to_bits().to_ne_bytes());
        raw.extend_from_slice(&g.to_bits().to_ne_bytes());
        let s_len = s.len() as u16 + 1;
        // Each offset counts from the end of its own location word.
        raw.extend_from_slice(&dyn_loc(4, s_len).to_ne_bytes());
        raw.extend_from_slice(&dyn_loc(s_len, j.len() as u16).to_ne_bytes());
        raw.extend_from_slice(s.as_bytes());
        raw.push(0);
        raw.extend_from_slice(j);
        Event { format: Arc::new(format), raw: raw.into(), ..event() }
    }

    fn text(event: &Event) -> String {
        let mut out = Vec::new();
        text_line(&event_record(event), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// The event's JSON line, checked to be the same both ways `record`
    /// writes one: through the owned record, and straight from the event.
    fn json(event: &Event) -> String {
        let mut out = Vec::new();
        write_record(&Record::Event(event_record(event)), &mut out);
        let mut direct = Vec::new();
        let undecodable = write_event_line(event, &mut NamespacesJsonCache::default(), &mut direct);
        assert_eq!(String::from_utf8_lossy(&direct), String::from_utf8_lossy(&out));
        assert_eq!(undecodable, event_record(event).error.is_some());
        String::from_utf8(out).unwrap()
    }

    /// A line as `record` printed it before lines had a `type`, with it.
    fn typed(old: &str) -> String {
        format!("{{\"type\":\"event\",{}", &old[1..])
    }

    #[test]
    fn call_graph_takes_fp_and_refuses_perfs_other_modes_by_name() {
        assert_eq!(parse_call_graph("fp"), Ok(CallGraph::Fp));
        for (mode, says) in [
            ("dwarf", "dwarf is not supported: usertrace walks stacks by frame pointers only (--call-graph fp)"),
            ("lbr", "lbr is not supported"),
            ("dwarf,16384", "dwarf,16384: no size or depth is taken; the supported mode is fp"),
            ("frames", "frames is no call-graph mode; the supported mode is fp"),
        ] {
            let error = parse_call_graph(mode).unwrap_err();
            assert!(error.starts_with(says), "{mode}: {error}");
        }
    }

    #[test]
    fn text_lines_look_like_perf_script() {
        assert_eq!(text(&event()), "          worker 10/11 [001] 12.345678: ping: n=12 msg=a\"b\\n x=NaN\n");
    }

    #[test]
    fn text_lines_escape_control_characters_so_one_event_is_one_line() {
        let e = every_kind(1, -1, 1, 0.5, 2.0, "one\ntwo\tthree\r\\ \u{1b}[31m\u{7f}\u{9b}é", &[0xde, 0xad]);
        let line = text(&Event { comm: "bad\nname".into(), ..e });
        assert_eq!(line.lines().count(), 1, "{line}");
        assert_eq!(
            line,
            "       bad\\nname 10/11 [001] 12.345678: kinds: a=1 b=-1 e=true f=0.5 g=2 \
             s=one\\ntwo\\tthree\\r\\\\ \\x1b[31m\\x7f\\u{9b}é j=dead\n"
        );
    }

    #[test]
    fn json_lines_escape_strings_and_keep_numbers() {
        assert_eq!(
            json(&event()),
            "{\"type\":\"event\",\"time_ns\":12345678901,\"cpu\":1,\"pid\":10,\"tid\":11,\"comm\":\"worker\",\"process\":\"server\",\
             \"event\":\"ping\",\"fields\":{\"n\":12,\"msg\":\"a\\\"b\\n\",\"x\":\"NaN\"}}\n"
        );
    }

    #[test]
    fn json_lines_carry_namespaces_when_recorded() {
        let namespaces = Namespaces { net: 1, uts: 2, ipc: 3, pid: 4, user: 5, mnt: 6, cgroup: 7 };
        let s = json(&Event { namespaces: Some(Arc::new(namespaces)), ..event() });
        assert!(
            s.contains(
                "\"process\":\"server\",\"namespaces\":{\"net\":1,\"uts\":2,\"ipc\":3,\"pid\":4,\"user\":5,\"mnt\":6,\"cgroup\":7},\"event\""
            ),
            "{s}"
        );
    }

    /// One recorder writes every line through one cache of the last
    /// namespaces object: a thread of another container in between, or one
    /// with no namespaces, must still get its own, and the one before its
    /// own again after it.
    #[test]
    fn json_lines_of_threads_in_turn_each_carry_their_own_namespaces() {
        let a = Namespaces { net: 1, uts: 2, ipc: 3, pid: 4, user: 5, mnt: 6, cgroup: 7 };
        let b = Namespaces { cgroup: 4026532000, ..a };
        let mut kept = NamespacesJsonCache::default();
        for (tid, namespaces) in [(11, Some(a)), (11, Some(a)), (12, Some(b)), (13, None), (11, Some(a)), (12, Some(b))] {
            let e = Event { tid, namespaces: namespaces.map(Arc::new), ..event() };
            let mut want = Vec::new();
            write_record(&Record::Event(event_record(&e)), &mut want);
            let mut got = Vec::new();
            write_event_line(&e, &mut kept, &mut got);
            assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want.clone()).unwrap());
            let want = String::from_utf8(want).unwrap();
            match namespaces {
                Some(ns) => assert!(want.contains(&format!("\"namespaces\":{{\"net\":1,\"uts\":2,\"ipc\":3,\"pid\":4,\"user\":5,\"mnt\":6,\"cgroup\":{}}},", ns.cgroup)), "{want}"),
                None => assert!(!want.contains("namespaces"), "{want}"),
            }
        }
    }

    #[test]
    fn json_lines_say_why_a_payload_did_not_decode() {
        let mut e = event();
        e.raw = e.raw[..10].into();
        let s = json(&e);
        assert!(s.contains("\"event\":\"ping\",\"fields\":{},\"error\":\""), "{s}");
        assert!(s.ends_with("\"}\n"), "{s}");
    }

    /// Event lines are byte for byte what the hand-written writer of the
    /// first release printed (with `type` added), for values at every edge
    /// scripts may meet.
    #[test]
    fn json_lines_are_the_bytes_record_printed_before_serde() {
        let strings = ["", "plain", "héllo wörld", "\"quoted\" \\ /", "\u{0}\u{1}\u{8}\u{9}\u{a}\u{c}\u{d}\u{1f}\u{7f}\u{9b}\u{2028}"];
        let floats = [0.0, -0.0, 1.0, -2.25, 0.1, 1e20, 1e-7, f64::MAX, f64::MIN_POSITIVE, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let mut checked = 0;
        for (i, s) in strings.iter().enumerate() {
            for (k, g) in floats.iter().enumerate() {
                let f = *g as f32;
                let ints = [(0, 0), (u64::MAX, i64::MIN), (1 << 53, -(1 << 53) - 1)];
                let (a, b) = ints[(i + k) % ints.len()];
                let mut e = every_kind(a, b, (k % 3) as u8, f, *g, s, &[0, 0xff, k as u8]);
                if k % 2 == 0 {
                    e.namespaces = Some(Arc::new(Namespaces { net: u64::MAX, cgroup: 4026531835, ..Namespaces::default() }));
                }
                e.comm = (*s).into();
                let mut old = String::new();
                old_json_line(&e, &mut old);
                assert_eq!(json(&e), typed(&old));
                checked += 1;
            }
        }
        let mut broken = event();
        broken.raw = broken.raw[..10].into();
        let mut old = String::new();
        old_json_line(&broken, &mut old);
        assert_eq!(json(&broken), typed(&old));
        assert_eq!(checked, strings.len() * floats.len());
    }

    /// The JSON writer `record` had before serde, kept as the reference.
    fn old_json_line(event: &Event, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "{{\"time_ns\":{},\"cpu\":{},\"pid\":{},\"tid\":{},\"comm\":", event.time_ns, event.cpu, event.pid, event.tid);
        old_json_string(&event.comm, out);
        out.push_str(",\"process\":");
        old_json_string(&event.process, out);
        if let Some(namespaces) = &event.namespaces {
            out.push_str(",\"namespaces\":{");
            for (i, (kind, inode)) in namespaces.iter().enumerate() {
                let _ = write!(out, "{}\"{kind}\":{inode}", if i > 0 { "," } else { "" });
            }
            out.push('}');
        }
        out.push_str(",\"event\":");
        old_json_string(event.name(), out);
        out.push_str(",\"fields\":{");
        match event.fields() {
            Ok(fields) => {
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    old_json_string(name, out);
                    out.push(':');
                    match value {
                        FieldValue::Unsigned(v) => drop(write!(out, "{v}")),
                        FieldValue::Signed(v) => drop(write!(out, "{v}")),
                        FieldValue::Bool(v) => drop(write!(out, "{v}")),
                        FieldValue::F32(v) if v.is_finite() => drop(write!(out, "{v}")),
                        FieldValue::F64(v) if v.is_finite() => drop(write!(out, "{v}")),
                        other => old_json_string(&other.to_string(), out),
                    }
                }
                out.push('}');
            }
            Err(e) => {
                out.push_str("},\"error\":");
                old_json_string(&e.to_string(), out);
            }
        }
        out.push_str("}\n");
    }

    fn old_json_string(s: &str, out: &mut String) {
        use std::fmt::Write;
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => drop(write!(out, "\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
    }

    #[test]
    fn the_config_file_s_containers_apply_unless_the_command_line_gives_its_own() {
        use clap::Parser;
        use usertrace_consumer::ContainerSelector;
        let path = std::env::temp_dir().join(format!("usertrace-containers-{}.toml", std::process::id()));
        std::fs::write(&path, "[record]\ncontainers = [\"id:0123456789ab\"]\n").unwrap();
        let args = |extra: &[&str]| -> RecordArgs {
            let config = ["record", "-e", "a", "--config", path.to_str().unwrap()];
            match crate::args::Cli::try_parse_from(std::iter::once("usertrace").chain(config).chain(extra.iter().copied())).unwrap().command {
                crate::args::Command::Record(r) => r,
                other => panic!("{other:?}"),
            }
        };
        let from_file = args(&[]);
        assert_eq!(super::with_configured_containers(&from_file).unwrap().containers, vec![ContainerSelector::ContainerId("0123456789ab".into())]);
        let given = args(&["--containers", "cgroup:/x"]);
        assert_eq!(super::with_configured_containers(&given).unwrap().containers, vec![ContainerSelector::CgroupPrefix("/x".into())]);
        std::fs::write(&path, "[record]\ncontainers = [\"web\"]\n").unwrap();
        assert!(super::with_configured_containers(&args(&[])).is_err());
        let _ = std::fs::remove_file(&path);
    }
}

//! `usertrace convert`: a recording (JSON lines or perf.data) as a Perfetto
//! trace, Chrome trace JSON, text, or JSON lines.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use usertrace_output::check_writable;
use usertrace_output::jsonl;

use crate::progress::Progress;
use crate::recording::{self, named};
use crate::sinks::{Destination, Lines, Sinks, Timeline};
use crate::trace_format::TraceFormat;

const MEMORY_HELP: &str = "\
Memory: JSON lines and text are written as IN is read, a line at a time,
in little memory whatever IN's size. A Perfetto or Chrome trace is
written in time order once IN is read, in little memory too: it holds
the spans still open, the tables of processes and threads (with the
names of events and fields), and up to 16 MiB of finished spans and
events. The rest waits, sorted, in temporary files in OUT's directory
(in TMPDIR when OUT is -, a FIFO or a device): up to about a third of
IN's size, never seen there, as each is removed from the directory as
soon as it is made. No line of IN may be longer than 16 MiB.

Exit status: 0 when OUT was written, also for an IN with no records (OUT
is then an empty trace, and stderr says so); 1 for a bad line in IN or a
failed write; 2 for a bad option.";

/// Convert a recording to a Perfetto trace, Chrome trace JSON or JSON lines
///
/// Reads IN (JSON lines as written by `usertrace record -o FILE.jsonl` or
/// `--format json`, or perf.data: `record -o FILE.data`'s archive, or a
/// file of `perf record -e 'user_events:...'`) and writes OUT in the format its extension names
/// (.pftrace or .perfetto-trace: Perfetto; .json: Chrome Trace Event JSON;
/// .jsonl: JSON lines), or that --format gives. IN may be - (standard
/// input) and OUT - (standard output, with --format). A file OUT appears
/// only once complete: a bad line in IN is named and nothing is written.
/// An OUT that is a device, a FIFO or - is written in place: as IN is
/// read (JSON lines, text), or once it is read (Perfetto, Chrome).
#[derive(Debug, Args)]
#[command(after_long_help = MEMORY_HELP)]
pub struct ConvertArgs {
    /// The recording to read: JSON lines (or - for standard input) or
    /// perf.data
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// The file to write, or - for standard output (or give it with -o)
    #[arg(value_name = "OUT", required_unless_present = "output_option", conflicts_with = "output_option")]
    pub output: Option<PathBuf>,

    /// The file to write, as perf's tools name it: the same as OUT
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output_option: Option<PathBuf>,

    /// perfetto, chrome, json (JSON lines) or text [default: from OUT's
    /// extension]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<TraceFormat>,
}

pub fn run(args: &ConvertArgs) -> ExitCode {
    // clap makes sure that exactly one of the two is given.
    let Some(output) = args.output.as_deref().or(args.output_option.as_deref()) else {
        eprintln!("usertrace convert: give the file to write, as OUT or with -o");
        return ExitCode::from(2);
    };
    let Some(format) = args.format.or_else(|| TraceFormat::from_path(output)) else {
        if output.as_os_str() == "-" {
            eprintln!("usertrace convert: standard output has no extension to tell the format by: give --format");
        } else {
            eprintln!(
                "usertrace convert: cannot tell the format of {} from its extension: name it .pftrace, .json or .jsonl, or give --format",
                output.display()
            );
        }
        return ExitCode::from(2);
    };
    if format == TraceFormat::PerfData {
        eprintln!("usertrace convert: perf.data is written only by `usertrace record -o FILE.data`, from the rings; convert reads it");
        return ExitCode::from(2);
    }
    let input = jsonl::input_name(&args.input);
    // Before reading what may be a large file.
    if let Err(e) = check_writable(output) {
        eprintln!("usertrace convert: {e}");
        return ExitCode::from(1);
    }
    let progress = Progress::reading("usertrace convert", &args.input);
    let records = match recording::open(&args.input, &progress) {
        Ok(records) => records,
        Err(e) => {
            progress.finish();
            eprintln!("usertrace convert: {}", named(&input, &e));
            return ExitCode::from(1);
        }
    };
    let mut sinks = Sinks::default();
    match Destination::create(output) {
        Ok(to) if format.streams() => sinks.add(Lines::from_file(format, to)),
        Ok(to) => sinks.add(Timeline::new(format, to)),
        Err(e) => {
            progress.finish();
            eprintln!("usertrace convert: {e}");
            return ExitCode::from(1);
        }
    }
    let count = match sinks.push_all(records) {
        Ok(count) => count,
        Err(e) => {
            // Dropping the sinks drops whatever a file OUT had.
            progress.finish();
            eprintln!("usertrace convert: {}", named(&input, &e));
            return ExitCode::from(1);
        }
    };
    if !format.streams() {
        progress.set_message(format!("writing {}", output.display()));
    }
    let completed = sinks.finish(|line| progress.suspend(|| eprintln!("usertrace convert: {line}")));
    progress.finish();
    if !completed {
        return ExitCode::from(1);
    }
    if count == 0 {
        eprintln!("usertrace convert: {input} holds no records: the output is an empty trace");
    }
    ExitCode::SUCCESS
}

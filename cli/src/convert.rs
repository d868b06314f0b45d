//! `usertrace convert`: a recording (JSON lines or perf.data) as a Perfetto
//! trace, Chrome trace JSON, text, or JSON lines.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use usertrace_output::jsonl;
use usertrace_output::{check_writable, AtomicFile, FileError};

use crate::progress::Progress;
use crate::recording::{self, named, Recording, RecordingError};
use crate::stdout::reader_gone;
use crate::trace_format::{write_streamed, TimelineOut, TraceFormat};

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

/// Why a conversion stopped.
enum Failure {
    Read(RecordingError),
    Write(FileError),
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
    let converted = if format.streams() { stream(format, records, output) } else { lay_out(format, records, output, &progress) };
    progress.finish();
    match converted {
        Ok(0) => {
            eprintln!("usertrace convert: {input} holds no records: the output is an empty trace");
            ExitCode::SUCCESS
        }
        Ok(_) => ExitCode::SUCCESS,
        Err(Failure::Read(e)) => {
            eprintln!("usertrace convert: {}", named(&input, &e));
            ExitCode::from(1)
        }
        // Standard output's reader has gone (`convert IN - | head`).
        Err(Failure::Write(e)) if output.as_os_str() == "-" && reader_gone(&e.source) => ExitCode::SUCCESS,
        Err(Failure::Write(e)) => {
            eprintln!("usertrace convert: {e}");
            ExitCode::from(1)
        }
    }
}

/// Bytes of lines gathered for one write.
const WRITE_SIZE: usize = 64 * 1024;

/// Writes each record as it is read; returns how many there were.
fn stream(format: TraceFormat, records: Recording, path: &Path) -> Result<u64, Failure> {
    let mut file = AtomicFile::create(path).map_err(Failure::Write)?;
    let failed = |source| Failure::Write(FileError { path: path.to_owned(), what: "writing failed", source });
    let mut lines = Vec::with_capacity(WRITE_SIZE * 2);
    let mut count = 0;
    for record in records {
        // An error drops `file`, and with it whatever a file OUT had.
        let record = record.map_err(Failure::Read)?;
        write_streamed(format, &record, &mut lines);
        count += 1;
        if lines.len() >= WRITE_SIZE {
            file.write_all(&lines).map_err(failed)?;
            lines.clear();
        }
    }
    file.write_all(&lines).map_err(failed)?;
    file.commit().map_err(Failure::Write)?;
    Ok(count)
}

/// Lays out the timeline as records are read, then writes it in time
/// order (which `progress` says); returns how many records there were.
fn lay_out(format: TraceFormat, records: Recording, path: &Path, progress: &Progress) -> Result<u64, Failure> {
    let mut file = AtomicFile::create(path).map_err(Failure::Write)?;
    let mut timeline = TimelineOut::beside(format, Some(&file));
    let mut count = 0;
    for record in records {
        // An error drops `file`, and with it whatever a file OUT had.
        timeline.push(&record.map_err(Failure::Read)?).map_err(Failure::Write)?;
        count += 1;
    }
    progress.set_message(format!("writing {}", path.display()));
    timeline.write_to(&mut file, path).map_err(Failure::Write)?;
    file.commit().map_err(Failure::Write)?;
    Ok(count)
}

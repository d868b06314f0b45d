//! `usertrace convert`: a JSON-lines recording as a Perfetto trace, Chrome
//! trace JSON, text, or JSON lines again.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use usertrace_output::{check_writable, jsonl};

use crate::trace_format::{self, TraceFormat};

/// Convert a JSON-lines recording to a Perfetto trace or Chrome trace JSON
///
/// Reads IN (as written by `usertrace record -o FILE.jsonl` or
/// `--format json`) and writes OUT in the format its extension names
/// (.pftrace or .perfetto-trace: Perfetto; .json: Chrome Trace Event JSON;
/// .jsonl: JSON lines), or that --format gives. OUT appears only once
/// complete; a bad line in IN is named and nothing is written.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The JSON-lines recording to read
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// The file to write
    #[arg(value_name = "OUT")]
    pub output: PathBuf,

    /// perfetto, chrome, json (JSON lines) or text [default: from OUT's
    /// extension]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<TraceFormat>,
}

pub fn run(args: &ConvertArgs) -> ExitCode {
    let Some(format) = args.format.or_else(|| TraceFormat::from_path(&args.output)) else {
        eprintln!(
            "usertrace convert: cannot tell the format of {} from its extension: name it .pftrace, .json or .jsonl, or give --format",
            args.output.display()
        );
        return ExitCode::from(2);
    };
    // Before reading what may be a large file.
    if let Err(e) = check_writable(&args.output) {
        eprintln!("usertrace convert: {e}");
        return ExitCode::from(1);
    }
    let records = match jsonl::read_file(&args.input) {
        Ok(records) => records,
        Err(e) => {
            eprintln!("usertrace convert: {}: {e}", args.input.display());
            return ExitCode::from(1);
        }
    };
    match trace_format::write_file(format, &records, &args.output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("usertrace convert: {e}");
            ExitCode::from(1)
        }
    }
}

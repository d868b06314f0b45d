//! `usertrace report`: the latency report of a JSON-lines recording.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use usertrace_output::{jsonl, Report};

use crate::args::Format;
use crate::json::print_line;
use crate::stdout::out;

/// Summarise a JSON-lines recording: event rates and span latencies
///
/// Per event: count and rate. Per span name: count, p50/p90/p99/max and a
/// log2 histogram of durations (as systemtap's @hist_log prints it). Per
/// process: events and spans. Then lost records and span ends whose begin
/// was not recorded.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The JSON-lines recording (`usertrace record -o FILE.jsonl`)
    #[arg(value_name = "FILE")]
    pub input: PathBuf,

    /// text, or json: one object (fields documented in cli/src/json.rs)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &ReportArgs) -> ExitCode {
    let records = match jsonl::read_file(&args.input) {
        Ok(records) => records,
        Err(e) => {
            eprintln!("usertrace report: {}: {e}", args.input.display());
            return ExitCode::from(1);
        }
    };
    let report = Report::new(&records);
    match args.format {
        Format::Text => out!("{report}"),
        Format::Json => print_line(&report),
    }
    ExitCode::SUCCESS
}

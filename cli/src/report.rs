//! `usertrace report`: the latency report of a recording (JSON lines or
//! perf.data).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use usertrace_output::jsonl;

use crate::args::Format;
use crate::progress::Progress;
use crate::recording::{self, named};
use crate::sinks::{ReportOut, ReportTo, Sinks};

/// Summarise a recording (JSON lines or perf.data): event rates and span latencies
///
/// Per event: count and rate. Per span name: count, p50/p90/p99/max and a
/// log2 histogram of durations (as systemtap's @hist_log prints it), and
/// where the recording has user stacks (record --call-graph fp), the 3
/// stacks its spans most often began at, innermost frame first from the
/// caller of usertrace's own frames. Per
/// process: events and spans. Then lost records and span ends whose begin
/// was not recorded. FILE is read as a stream. Memory holds, per span
/// name, 8 bytes for each finished span (its duration, so percentiles are
/// exact) and at most 32 distinct begin stacks (begins from any further
/// stack are only counted); per event name and per process, a few counts
/// and a name; and the spans open at once, without their fields but with
/// their begin stacks. It holds no event, no closed span and no thread.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The recording: JSON lines (`usertrace record -o FILE.jsonl`; a
    /// dash for standard input) or perf.data (`record -o FILE.data`'s
    /// archive, a flight recorder's dump, or `perf record`'s own file)
    #[arg(value_name = "FILE")]
    pub input: PathBuf,

    /// text, or json: one object (fields documented in cli/src/json.rs)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &ReportArgs) -> ExitCode {
    let input = jsonl::input_name(&args.input);
    let progress = Progress::reading("usertrace report", &args.input);
    let records = match recording::open(&args.input, &progress) {
        Ok(records) => records,
        Err(e) => {
            progress.finish();
            eprintln!("usertrace report: {}", named(&input, &e));
            return ExitCode::from(1);
        }
    };
    let mut sinks = Sinks::default();
    sinks.add(ReportOut::new(ReportTo::Stdout, args.format));
    let seen = match sinks.push_all(records) {
        Ok(seen) => seen,
        Err(e) => {
            progress.finish();
            eprintln!("usertrace report: {}", named(&input, &e));
            return ExitCode::from(1);
        }
    };
    progress.finish();
    if seen == 0 {
        eprintln!("usertrace report: {input} holds no records");
    }
    // The report cannot fail: it is printed, and a reader of standard
    // output that has gone ends it quietly.
    sinks.finish(|line| eprintln!("usertrace report: {line}"));
    ExitCode::SUCCESS
}

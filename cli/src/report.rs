//! `usertrace report`: the latency report of a JSON-lines recording.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use usertrace_output::report::EventStats;
use usertrace_output::timeline::{event_name, TimelineBuilder};
use usertrace_output::{jsonl, Record, Report};

use crate::args::Format;
use crate::json::print_line;
use crate::stdout::out;

/// Summarise a JSON-lines recording: event rates and span latencies
///
/// Per event: count and rate. Per span name: count, p50/p90/p99/max and a
/// log2 histogram of durations (as systemtap's @hist_log prints it). Per
/// process: events and spans. Then lost records and span ends whose begin
/// was not recorded. FILE is read as a stream: memory holds every span
/// (for its percentiles), the processes and threads, not the events.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The JSON-lines recording (`usertrace record -o FILE.jsonl`), or -
    /// for standard input
    #[arg(value_name = "FILE")]
    pub input: PathBuf,

    /// text, or json: one object (fields documented in cli/src/json.rs)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &ReportArgs) -> ExitCode {
    let input = jsonl::input_name(&args.input);
    let records = match jsonl::open(&args.input) {
        Ok(records) => records,
        Err(e) => {
            eprintln!("usertrace report: {input}: {e}");
            return ExitCode::from(1);
        }
    };
    // The report needs no instants: only spans, processes and losses from
    // the timeline, and a count per event name.
    let mut timeline = TimelineBuilder::without_instants();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut seen = 0u64;
    for record in records {
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                eprintln!("usertrace report: {input}: {e}");
                return ExitCode::from(1);
            }
        };
        seen += 1;
        if let Record::Event(e) = &record {
            let name = event_name(e);
            // A name is allocated once, not per event.
            match counts.get_mut(name.as_ref()) {
                Some(count) => *count += 1,
                None => {
                    counts.insert(name.into_owned(), 1);
                }
            }
        }
        timeline.push(&record);
    }
    if seen == 0 {
        eprintln!("usertrace report: {input} holds no records");
    }
    let timeline = timeline.finish();
    let base = Report::with_timeline(&[], &timeline);
    let report = Report { events: event_stats(counts, base.duration_ns), ..base };
    match args.format {
        Format::Text => out!("{report}"),
        Format::Json => print_line(&report),
    }
    ExitCode::SUCCESS
}

/// Each event's count and rate, as `Report::with_timeline` gives them from
/// a slice of records.
fn event_stats(counts: BTreeMap<String, u64>, duration_ns: u64) -> Vec<EventStats> {
    let seconds = duration_ns as f64 / 1e9;
    counts.into_iter().map(|(name, count)| EventStats { name, count, rate_per_s: (duration_ns > 0).then(|| count as f64 / seconds) }).collect()
}

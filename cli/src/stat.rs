//! `usertrace stat -e PATTERN [CMD]`: how many of each event, and how
//! many were lost.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Args;
use usertrace_consumer::{Output, Stacks};

use crate::args::Format;
use crate::json::{print_line, CpuLost, OtlpLine, StatLine};
use crate::otlp_args::{OtlpArgs, RECORD_GRACE};
use usertrace_consumer::output_records::to_record;
use crate::run::{print_summary, run, Recording, RunArgs};
use crate::stdout::outln;

const OUTPUT_HELP: &str = "\
Output:
  text  a COUNT  EVENT line per event, then COUNT  lost, and a line for
        each CPU that lost events.
  json  one object: counts (event: count), events, skipped (by -p), lost,
        lost_by_cpu [{cpu, lost}], lost_task_records, malformed, seconds.

With --otlp or --config (a node agent that counts as it exports), the
events also go to the OTLP endpoint as `record --otlp` sends them, and
the output adds what became of them: text rows `exported to OTLP`,
`dropped by the OTLP exporter` and `failed to export`; JSON an `otlp`
object {exported, dropped, failed, spans, log_records, retries}. Every
event counted is exported, dropped or failed.

Without CMD, counting goes on until Ctrl-C (or --duration); the exit
status is then 0. With CMD, it is CMD's own, or 127 if CMD cannot start.";

/// Count events, and say how many were lost
///
/// Counts the user_events matching each PATTERN on every CPU until CMD
/// exits (or Ctrl-C, or --duration), then prints the count of each event,
/// the total lost, and the lost count of each CPU that lost events.
#[derive(Debug, Args)]
#[command(after_long_help = OUTPUT_HELP)]
pub struct StatArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// text: a table; json: one JSON object when counting ends
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,

    #[command(flatten, next_help_heading = "OTLP export")]
    pub otlp: OtlpArgs,
}

pub fn run_stat(args: &StatArgs) -> ExitCode {
    let exporter = match args.otlp.start_exporter("stat") {
        Ok(exporter) => exporter,
        Err(code) => return code,
    };
    // Counted by tracepoint id and named once: a name built per event
    // would be an allocation per event. A name re-registered under a new
    // id is summed under its name at the end.
    let mut by_id: BTreeMap<u64, (String, u64)> = BTreeMap::new();
    // With nothing to export and no -p, the session only counts: the
    // events, never handed on, come back counted by name in the summary.
    let recording = if exporter.is_none() { Recording::Counted } else { Recording::Live };
    let result = run(&args.run, "stat", recording, Stacks::None, |output| {
        match &output {
            Output::Event(e) => by_id.entry(e.format.id).or_insert_with(|| (e.format.full_name(), 0)).1 += 1,
            // Attached events show with 0 even when nothing arrives.
            Output::Attached { format, .. } => {
                by_id.entry(format.id).or_insert_with(|| (format.full_name(), 0));
            }
            Output::Lost { .. } | Output::Process { .. } | Output::Exit { .. } | Output::NotRecorded(_) => {}
        }
        if let Some(exporter) = &exporter {
            if let Some(record) = to_record(output) {
                exporter.push(record);
            }
        }
    });
    let summary = match result {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut counts: BTreeMap<String, u64> = summary.stats.counted.clone();
    for (name, count) in by_id.into_values() {
        *counts.entry(name).or_default() += count;
    }
    let exported = exporter.map(|e| e.finish(RECORD_GRACE));
    let stats = &summary.stats;
    let lost_cpus = stats.lost.iter().filter(|l| l.1 > 0);
    match args.format {
        Format::Text => {
            outln!("{:>12}  event", "count");
            for (name, count) in &counts {
                outln!("{count:>12}  {name}");
            }
            // The total always shows, so "nothing lost" is said, not implied.
            outln!("{:>12}  lost", stats.lost_total());
            for (cpu, lost) in lost_cpus {
                outln!("{lost:>12}  lost on CPU {cpu}");
            }
            if stats.lost_in_shared_memory > 0 {
                outln!("{:>12}  lost in shared-memory rings (USERTRACE_SHM_RING_KIB sizes them)", stats.lost_in_shared_memory);
            }
            if stats.lost_sideband > 0 {
                outln!("{:>12}  task records lost (process names may be wrong)", stats.lost_sideband);
            }
            if let Some(otlp) = &exported {
                outln!("{:>12}  exported to OTLP ({} spans, {} log records)", otlp.exported_events, otlp.spans, otlp.logs);
                outln!("{:>12}  dropped by the OTLP exporter (queue full or unsent at exit)", otlp.dropped_events);
                outln!("{:>12}  failed to export", otlp.failed_events);
                if let Some(tail) = &otlp.tail {
                    outln!("{:>12}  left out by --tail ({} traces dropped, {} kept)", tail.events_dropped, tail.traces_dropped, tail.traces_kept);
                }
            }
        }
        Format::Json => print_line(&StatLine {
            counts: &counts,
            events: counts.values().sum(),
            skipped: summary.skipped,
            lost: stats.lost_total(),
            lost_by_cpu: lost_cpus.map(|&(cpu, lost)| CpuLost { cpu, lost }).collect(),
            lost_in_shared_memory: stats.lost_in_shared_memory,
            lost_task_records: stats.lost_sideband,
            malformed: stats.malformed,
            seconds: summary.duration.as_secs_f64(),
            otlp: exported.as_ref().map(OtlpLine::from),
        }),
    }
    print_summary("stat", &summary);
    if let Some(otlp) = &exported {
        eprintln!("usertrace stat: {otlp}");
    }
    summary.exit
}

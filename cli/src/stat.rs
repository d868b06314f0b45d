//! `usertrace stat -e PATTERN [-- CMD]`: how many of each event, and how
//! many were lost.

use std::collections::BTreeMap;
use std::process::ExitCode;

use usertrace_consumer::Output;

use crate::run::{print_summary, run, RunArgs};

pub const USAGE: &str = "usage: usertrace stat -e PATTERN... [--buffer-size PAGES] [-- CMD ARGS...]

Counts the events matching each PATTERN until CMD exits (or Ctrl-C), then
prints one line per event, the total lost, and the lost count of each CPU
that lost events.
";

pub fn run_stat(args: &[String]) -> ExitCode {
    if args.iter().take_while(|a| *a != "--").any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let parsed = match RunArgs::parse(args, |arg, _| Err(format!("unknown option {arg:?}"))) {
        Ok(p) => p,
        Err(msg) => {
            eprintln!("usertrace stat: {msg}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let result = run(&parsed, "stat", |output| match output {
        Output::Event(e) => *counts.entry(e.format.full_name()).or_default() += 1,
        // Attached events show with 0 even when nothing arrives.
        Output::Attached { format, .. } => {
            counts.entry(format.full_name()).or_default();
        }
        Output::Lost { .. } => {}
    });
    let summary = match result {
        Ok(s) => s,
        Err(code) => return code,
    };
    println!("{:>12}  event", "count");
    for (name, count) in &counts {
        println!("{count:>12}  {name}");
    }
    // The total always shows, so "nothing lost" is said, not implied.
    println!("{:>12}  lost", summary.stats.lost_total());
    for (cpu, lost) in summary.stats.lost.iter().filter(|l| l.1 > 0) {
        println!("{lost:>12}  lost on CPU {cpu}");
    }
    if summary.stats.lost_sideband > 0 {
        println!("{:>12}  task records lost (process names may be wrong)", summary.stats.lost_sideband);
    }
    print_summary("stat", &summary);
    summary.exit
}

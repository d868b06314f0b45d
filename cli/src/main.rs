//! `usertrace`: inspect and record user_events.

mod launch;
mod list;
mod record;
mod run;
mod stat;
mod status;

use std::process::ExitCode;

const USAGE: &str = "usage: usertrace <command>

commands:
  status    say whether user_events tracing works here, and what to do if not
  list      show registered user events, their fields and who traces them
  record    print events as they happen (text or JSON lines)
  stat      count events

`usertrace <command> --help` tells more.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("status") => status::run(&args[1..]),
        Some("list") => list::run(&args[1..]),
        Some("record") => record::run_record(&args[1..]),
        Some("stat") => stat::run_stat(&args[1..]),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("usertrace: unknown command {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
        None => {
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

//! `usertrace`: inspect, record and count user_events.
//!
//! One file per subcommand (`status`, `list`, `record`, `stat`, `dump`,
//! `convert`, `export`, `report`, `completions`, `man_pages`), each with
//! its clap options; `args` ties them into the command line. Beside them:
//!
//! - `run` is what `record` and `stat` share: the session, the command
//!   they start (`launch`, held until the session is attached) and the
//!   recording's clock (`clock`);
//! - `flight`, `trigger` and `control_socket` are the flight recorder
//!   (`record --flight-recorder`), what asks it for a dump, and the socket
//!   `dump` reaches it through;
//! - `recording` is a file given to `convert`, `report` or `export`, and
//!   `progress` the bar shown while one is read;
//! - `sinks` are a recording's outputs, one list of them whether the
//!   recording is live (`record`) or read from a file (`convert`,
//!   `report`, `export`): lines, a timeline, the report, OTLP;
//! - `text` and `trace_format` are the formats a recording is written in,
//!   and `json` holds every other `--format json` line and documents them
//!   as a public contract;
//! - `otlp_args` holds the OTLP options `export` and `record` share, and
//!   `config_file` their TOML file;
//! - `verbosity` is what `-q` and `-v` allow on stderr, and `stdout` how
//!   every command prints.
//!
//! # Exit status
//!
//! - 0: success; `record` and `stat` without a command also exit 0 when
//!   stopped by Ctrl-C or `--duration`.
//! - 1: a runtime error (user_events unavailable, no such event, an event
//!   whose tracefs format cannot be parsed, a failed session, a failed
//!   write, standard output that cannot be written, an unwritable `-o`, a
//!   bad line in a recording given to `convert` or `report`); stderr says
//!   what to do. A standard output whose reader has gone (`| head`) is no
//!   error: the command ends quietly with the status it would have had.
//! - 2: a usage error (clap's code): an unknown option, a bad value (a
//!   malformed `-e` or `list` pattern included).
//! - 127: `record`/`stat` could not start the command.
//! - otherwise, `record`/`stat` with a command: the command's own exit
//!   status, or 128+N when signal N killed it; 0 when `--duration` ended
//!   first and the command was sent SIGTERM.
//!
//! A command that exits 1 or 2 itself is thus not told apart from our own
//! errors by the status alone; stderr lines of ours start `usertrace`.

// Unsafe is opt-in per module (clock, control_socket, flight, launch, run),
// each with a `//! # Safety` paragraph.
#![deny(unsafe_code)]

// The options' doc comments are clap's --help text, written for a terminal
// ("[SYSTEM:]NAME", "L<level>"), not Markdown: escaping them for rustdoc
// would put the backslashes into --help.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod args;
mod clock;
mod completions;
mod config_file;
mod control_socket;
mod convert;
mod dump;
mod export;
mod flight;
mod json;
mod launch;
mod list;
mod man_pages;
mod otlp_args;
mod progress;
mod record;
mod recording;
mod report;
mod run;
mod sinks;
mod stat;
mod status;
mod stdout;
mod text;
mod trigger;
mod trace_format;
mod verbosity;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and --version go to stdout with 0; errors to stderr with 2.
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    cli.verbosity().set();
    let (name, code) = match &cli.command {
        Command::Status(a) => ("status", status::run(a)),
        Command::List(a) => ("list", list::run(a)),
        Command::Record(a) => ("record", record::run_record(a)),
        Command::Dump(a) => ("dump", dump::run(a)),
        Command::Stat(a) => ("stat", stat::run_stat(a)),
        Command::Convert(a) => ("convert", convert::run(a)),
        Command::Export(a) => ("export", export::run(a)),
        Command::Report(a) => ("report", report::run(a)),
        Command::Completions(a) => ("completions", completions::run(a)),
        Command::ManPages(a) => ("man-pages", man_pages::run(a)),
    };
    // What the command printed is flushed here, and a failure to print it
    // becomes the status: once, for every command.
    stdout::finish(name, code)
}

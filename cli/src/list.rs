//! `usertrace list [PATTERN]`: the registered user events, their fields, and
//! who is tracing them.

use std::collections::HashMap;
use std::process::ExitCode;

use clap::Args;
use usertrace_consumer::{find_tracefs, load, scan, Pattern, USER_SYSTEMS};

use crate::args::Format;
use crate::run::parse_pattern;
use crate::json::{print_line, ListedEvent, ListedField};
use crate::stdout::outln;

/// Show registered user events, their fields and who traces them
///
/// Lists the registered user events matching PATTERN (all of them without
/// one), each with its fields and whether ftrace or perf has it enabled.
/// An exact name that matches nothing is an error (exit status 1); a
/// pattern with wildcards that matches nothing is an empty list.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// [SYSTEM:]NAME, with * and ? as wildcards, or
    /// PROVIDER:L<level>[K<keyword>] for EventHeader events
    #[arg(value_name = "PATTERN", value_parser = parse_pattern)]
    pub pattern: Option<String>,

    /// text: an event line, then a line per field; json: one JSON object
    /// per event (event, system, name, id, fields [{name, type}], used_by)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &ListArgs) -> ExitCode {
    let pattern = Pattern::parse(args.pattern.as_deref().unwrap_or("*"));
    let (pattern, tracefs) = match pattern.map_err(usertrace_consumer::Error::from).and_then(|p| Ok((p, find_tracefs()?))) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("usertrace list: {e}");
            return ExitCode::from(1);
        }
    };
    // Lossy: 6.12 can print a freed event's name as garbage while the kernel
    // deletes events, and that one line must not hide every other event's users.
    let users = std::fs::read(tracefs.join("user_events_status"))
        .map(|bytes| parse_status(&String::from_utf8_lossy(&bytes)))
        .unwrap_or_default();
    let candidates = match scan(&tracefs, &USER_SYSTEMS) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("usertrace list: {e}");
            return ExitCode::from(1);
        }
    };
    let mut shown = 0;
    let mut unreadable = 0;
    for candidate in candidates.iter().filter(|c| pattern.matches(&c.system, &c.name)) {
        let format = match load(candidate) {
            Ok(format) => format,
            // Deleted since the scan: not an error.
            Err(usertrace_consumer::Error::Io { .. }) => continue,
            // Registered, but not as this version can read: said, so that
            // it is not taken for an event that is not there.
            Err(e) => {
                eprintln!("usertrace list: {e}");
                unreadable += 1;
                continue;
            }
        };
        // The status file names multi-format events by their tracepoint
        // name (`NAME.<hexid>`); older kernels printed the bare NAME.
        let base = candidate.name.split('.').next().unwrap_or(&candidate.name);
        let used_by = users.get(&candidate.name).or_else(|| users.get(base)).map_or("", String::as_str);
        match args.format {
            Format::Text => {
                let used = if used_by.is_empty() { "not traced".to_owned() } else { format!("used by {used_by}") };
                outln!("{}  ({used})", format.full_name());
                for field in &format.fields {
                    outln!("    {} {}", field.type_name, field.name);
                }
            }
            Format::Json => print_line(&ListedEvent {
                event: format.full_name(),
                system: &format.system,
                name: &format.name,
                id: format.id,
                fields: format.fields.iter().map(|f| ListedField { name: &f.name, type_name: &f.type_name }).collect(),
                used_by: used_by.split_whitespace().collect(),
            }),
        }
        shown += 1;
    }
    if shown == 0 && unreadable > 0 {
        return ExitCode::from(1);
    }
    if shown == 0 {
        let name = pattern.as_str();
        // An exact name is a question about one event: "no" is an error.
        // An empty glob is an empty listing.
        if pattern.is_glob() {
            eprintln!("usertrace list: no user event matches \"{name}\"");
        } else {
            eprintln!(
                "usertrace list: no user event matches \"{name}\": an event exists only while a program has it \
                 registered (`usertrace list` shows all that are)"
            );
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// `user_events_status`: `NAME[ # Used by ftrace perf other]` lines, then a
/// blank line and totals.
fn parse_status(text: &str) -> HashMap<String, String> {
    text.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|line| {
            let (name, rest) = match line.split_once(" #") {
                Some((n, r)) => (n, r.trim().trim_start_matches("Used by").trim()),
                None => (line, ""),
            };
            let name = name.split_whitespace().next()?;
            Some((name.to_owned(), rest.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_say_who_uses_each_event() {
        let m = parse_status("ping # Used by perf\npong\nboth # Used by ftrace perf\n\nActive: 3\nBusy: 2\n");
        assert_eq!(m["ping"], "perf");
        assert_eq!(m["pong"], "");
        assert_eq!(m["both"], "ftrace perf");
        assert_eq!(m.len(), 3);
    }
}

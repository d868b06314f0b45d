//! `usertrace list [PATTERN]`: the registered user events, their fields, and
//! who is tracing them.

use std::collections::HashMap;
use std::process::ExitCode;

use clap::Args;
use usertrace_consumer::{find_tracefs, load, scan, shared_tracepoints, EventFormat, Pattern, SharedTracepoint, USER_SYSTEMS};

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
    /// per event (event, system, name, id, fields [{name, type}], used_by,
    /// transport: user_events or shm, pids: for shm, who has it registered)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &ListArgs) -> ExitCode {
    let pattern = match Pattern::parse(args.pattern.as_deref().unwrap_or("*")) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("usertrace list: {}", usertrace_consumer::Error::from(e));
            return ExitCode::from(1);
        }
    };
    // Producers on a kernel without user_events register in shared memory;
    // they are listed after the kernel's events, and alone where there is
    // no tracefs.
    let listing = shared_tracepoints();
    say_refused(&listing.refused);
    let shared: Vec<SharedTracepoint> =
        listing.tracepoints.into_iter().filter(|t| pattern.matches(&t.format.system, &t.format.name)).collect();
    let (mut shown, mut unreadable) = (0, 0);
    match find_tracefs() {
        Ok(tracefs) => match list_tracefs(args, &pattern, &tracefs) {
            Ok((s, u)) => (shown, unreadable) = (s, u),
            Err(code) => return code,
        },
        // No user_events here, and programs do not take shared memory
        // either (USERTRACE_TRANSPORT=user_events): say why nothing is listed.
        Err(e) if shared.is_empty() && !usertrace::transport().is_ok_and(|t| t.transport == usertrace::Transport::SharedMemory) => {
            eprintln!("usertrace list: {e}");
            return ExitCode::from(1);
        }
        Err(_) => {}
    }
    for tracepoint in &shared {
        print_shared(args.format, tracepoint);
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

/// The most refused registries named one by one: a hostile container can
/// plant thousands.
const REFUSALS_NAMED: usize = 5;

/// Says which producers' registries were refused and why: whatever they
/// registered is missing from the listing.
fn say_refused(refused: &[(std::path::PathBuf, String)]) {
    for (path, why) in refused.iter().take(REFUSALS_NAMED) {
        eprintln!("usertrace list: {} is not read, so what its process registered is not listed: {why}", path.display());
    }
    if refused.len() > REFUSALS_NAMED {
        eprintln!("usertrace list: and {} more registries not read", refused.len() - REFUSALS_NAMED);
    }
}

/// A tracepoint registered through shared memory: who has it, and whether
/// a recorder holds them.
fn print_shared(format: Format, tracepoint: &SharedTracepoint) {
    let SharedTracepoint { format: event, pids, recorders } = tracepoint;
    let list = |ids: &[u32]| ids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
    let used = if recorders.is_empty() { "not traced".to_owned() } else { format!("used by usertrace, pid {}", list(recorders)) };
    let used_by = if recorders.is_empty() { Vec::new() } else { vec!["usertrace"] };
    let listing = Listing { how: format!("shared memory, pid {}; {used}", list(pids)), used_by, transport: "shm", pids: pids.clone() };
    print_event(format, event, listing);
}

/// What a listing says of an event besides its layout.
struct Listing<'a> {
    /// The text's parenthesis: who has it, who uses it.
    how: String,
    used_by: Vec<&'a str>,
    transport: &'static str,
    pids: Vec<u32>,
}

/// One event: a line and a line per field, or one JSON object.
fn print_event(format: Format, event: &EventFormat, listing: Listing<'_>) {
    match format {
        Format::Text => {
            outln!("{}  ({})", event.full_name(), listing.how);
            for field in &event.fields {
                outln!("    {} {}", field.type_name, field.name);
            }
        }
        Format::Json => print_line(&ListedEvent {
            event: event.full_name(),
            system: &event.system,
            name: &event.name,
            id: event.id,
            fields: event.fields.iter().map(|f| ListedField { name: &f.name, type_name: &f.type_name }).collect(),
            used_by: listing.used_by,
            transport: listing.transport,
            pids: listing.pids,
        }),
    }
}

/// The kernel's user events under `tracefs` that match: how many were
/// shown, and how many could not be read; Err: exit with it.
fn list_tracefs(args: &ListArgs, pattern: &Pattern, tracefs: &std::path::Path) -> Result<(usize, usize), ExitCode> {
    // Lossy: 6.12 can print a freed event's name as garbage while the kernel
    // deletes events, and that one line must not hide every other event's users.
    let users = std::fs::read(tracefs.join("user_events_status"))
        .map(|bytes| parse_status(&String::from_utf8_lossy(&bytes)))
        .unwrap_or_default();
    let candidates = match scan(tracefs, &USER_SYSTEMS) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("usertrace list: {e}");
            return Err(ExitCode::from(1));
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
        let how = if used_by.is_empty() { "not traced".to_owned() } else { format!("used by {used_by}") };
        let listing = Listing { how, used_by: used_by.split_whitespace().collect(), transport: "user_events", pids: Vec::new() };
        print_event(args.format, &format, listing);
        shown += 1;
    }
    Ok((shown, unreadable))
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

//! `usertrace list [PATTERN]`: the registered user events, their fields, and
//! who is tracing them.

use std::collections::HashMap;
use std::process::ExitCode;

use usertrace_consumer::{find_tracefs, load, scan, Pattern, USER_SYSTEMS};

pub const USAGE: &str = "usage: usertrace list [PATTERN]

Lists registered user events ([SYSTEM:]NAME, with * and ?), each with its
fields and whether ftrace or perf is attached.
";

pub fn run(args: &[String]) -> ExitCode {
    let pattern = match args {
        [] => Pattern::parse("*"),
        [h] if h == "-h" || h == "--help" => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        [p] => Pattern::parse(p),
        _ => {
            eprintln!("usertrace list: give at most one pattern\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (pattern, tracefs) = match pattern.map_err(usertrace_consumer::Error::from).and_then(|p| Ok((p, find_tracefs()?))) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("usertrace list: {e}");
            return ExitCode::from(1);
        }
    };
    let users = std::fs::read_to_string(tracefs.join("user_events_status")).map(|s| parse_status(&s)).unwrap_or_default();
    let candidates = match scan(&tracefs, &USER_SYSTEMS) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("usertrace list: {e}");
            return ExitCode::from(1);
        }
    };
    let mut shown = 0;
    for candidate in candidates.iter().filter(|c| pattern.matches(&c.system, &c.name)) {
        // Deleted since the scan: not an error.
        let Ok(format) = load(candidate) else { continue };
        // The status file names multi-format events by their tracepoint
        // name (`NAME.<hexid>`); older kernels printed the bare NAME.
        let base = candidate.name.split('.').next().unwrap_or(&candidate.name);
        let used = match users.get(&candidate.name).or_else(|| users.get(base)).map(String::as_str) {
            Some("") | None => "not traced".to_owned(),
            Some(u) => format!("used by {u}"),
        };
        println!("{}  ({used})", format.full_name());
        for field in &format.fields {
            println!("    {} {}", field.type_name, field.name);
        }
        shown += 1;
    }
    if shown == 0 {
        eprintln!("usertrace list: no user event matches {:?}", pattern.as_str());
        // An exact name is a question about one event: "no" is an error.
        // An empty glob is an empty listing.
        if !pattern.is_glob() {
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

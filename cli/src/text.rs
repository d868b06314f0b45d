//! `--format text`: one event per line, as `perf script` prints it:
//! `COMM PID/TID [CPU] SECONDS.MICROS: EVENT: field=value ...`
//!
//! Strings are printed as they are except for what would break the
//! one-event-one-line rule or make it ambiguous: `\n`, `\r`, `\t` and
//! `\` are written `\n`, `\r`, `\t` and `\\`; other C0 controls and DEL
//! `\xNN`; C1 controls (U+0080..U+009F, which terminals act on) `\u{NN}`.
//! The same goes for the thread name. Bytes are printed as hex, f32/f64 as
//! Rust prints them (`NaN`, `inf` included). Only events have a text
//! line; losses are told on stderr as they happen.

use std::borrow::Cow;
use std::io::Write;

use usertrace_output::{EventRecord, Value};

/// One `perf script`-like line.
pub fn text_line(event: &EventRecord, out: &mut Vec<u8>) {
    let secs = event.time_ns / 1_000_000_000;
    let micros = event.time_ns % 1_000_000_000 / 1_000;
    let comm = escape(&event.comm);
    let _ = write!(out, "{comm:>16} {}/{} [{:03}] {secs}.{micros:06}: {}:", event.pid, event.tid, event.cpu, event.event);
    match &event.error {
        None => {
            for (name, value) in &event.fields {
                let _ = match value {
                    Value::Str(s) => write!(out, " {name}={}", escape(s)),
                    other => write!(out, " {name}={other}"),
                };
            }
        }
        Some(e) => {
            let _ = write!(out, " <{e}>");
        }
    }
    out.push(b'\n');
}

/// `s` with the characters the module docs name escaped; borrowed when
/// there are none, as in nearly every string.
fn escape(s: &str) -> Cow<'_, str> {
    let needs = |c: char| c == '\\' || c.is_control();
    if !s.chars().any(needs) {
        return Cow::Borrowed(s);
    }
    use std::fmt::Write;
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

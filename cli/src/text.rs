//! `--format text`: one event per line, as `perf script` prints it:
//! `COMM PID/TID [CPU] SECONDS.MICROS: EVENT: field=value ...`
//!
//! Strings are printed as they are except for what would break the
//! one-event-one-line rule or make it ambiguous: `\n`, `\r`, `\t` and
//! `\` are written `\n`, `\r`, `\t` and `\\`; other C0 controls and DEL
//! `\xNN`; C1 controls (U+0080..U+009F, which terminals act on) `\u{NN}`.
//! The same goes for the thread name. Bytes are printed as hex, f32/f64 as
//! Rust prints them (`NaN`, `inf` included), arrays `[1, 2]` and structs
//! `{x=1, y=2}` (an EventHeader event's). Only events have a text
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
                // An EventHeader event names its own fields, so names are
                // escaped too.
                let _ = write!(out, " {}=", escape(name));
                write_value(value, out);
            }
        }
        Some(e) => {
            let _ = write!(out, " <{e}>");
        }
    }
    out.push(b'\n');
}

/// A value as the line shows it: arrays `[1, 2]` and structs `{x=1, y=2}`
/// as [`Value`] prints them, with their strings escaped like any other.
fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Str(s) => out.extend_from_slice(escape(s).as_bytes()),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        Value::Struct(members) => {
            out.push(b'{');
            for (i, (name, member)) in members.iter().enumerate() {
                let _ = write!(out, "{}{}=", if i > 0 { ", " } else { "" }, escape(name));
                write_value(member, out);
            }
            out.push(b'}');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_and_structs_print_nested_with_their_strings_escaped() {
        let s = |v: &str| Value::Str(v.into());
        let event = EventRecord {
            time_ns: 2_000_001_000,
            cpu: 3,
            pid: 7,
            tid: 8,
            comm: "w".into(),
            process: "p".into(),
            namespaces: None,
            event: "Shop:Checkout".into(),
            tracepoint: Some("Shop_L4K1".into()),
            fields: vec![
                ("arr".into(), Value::Array(vec![Value::Unsigned(1), s("a\nb")])),
                ("pt".into(), Value::Struct(vec![("x".into(), Value::Signed(-2)), ("odd\nname".into(), Value::Struct(vec![("y".into(), s("z"))]))])),
            ],
            error: None,
            stack: Vec::new(),
        };
        let mut out = Vec::new();
        text_line(&event, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "               w 7/8 [003] 2.000001: Shop:Checkout: arr=[1, a\\nb] pt={x=-2, odd\\nname={y=z}}\n"
        );
    }
}

//! `usertrace record`: print every event, in time order, with who emitted it.
//!
//! text (like `perf script`):
//!   `COMM PID/TID [CPU] SECONDS.MICROS: EVENT: field=value ...`
//! json: one [`EventLine`](crate::json::EventLine) per line; its fields are
//! a public contract, documented in `json.rs`.
//!
//! In text, strings are printed as they are except for what would break
//! the one-event-one-line rule or make it ambiguous: `\n`, `\r`, `\t` and
//! `\` are written `\n`, `\r`, `\t` and `\\`; other C0 controls and DEL
//! `\xNN`; C1 controls (U+0080..U+009F, which terminals act on) `\u{NN}`.
//! The same goes for the thread name. Bytes are printed as hex, f32/f64 as
//! Rust prints them (`NaN`, `inf` included).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use usertrace_consumer::{Event, FieldValue, Output};

use crate::args::Format;
use crate::json::{write_line, EventLine};
use crate::run::{print_summary, run, RunArgs};

/// What `usertrace help record` shows after the options.
const OUTPUT_HELP: &str = "\
Output:
  text  COMM PID/TID [CPU] SECONDS.MICROS: EVENT: field=value ...
        as perf script prints it. In strings, newline, CR, tab and
        backslash are written \\n \\r \\t \\\\, other control characters
        \\xNN or \\u{NN}, so that one event is one line.
  json  one object per event and line: time_ns, cpu, pid, tid, comm,
        process, namespaces (only where the session may see them: root or
        CAP_PERFMON), event, fields (name: value, in declaration order),
        and error if the payload could not be decoded.

Without CMD, recording goes on until Ctrl-C (or --duration); the exit
status is then 0. With CMD, it is CMD's own, or 127 if CMD cannot start.";

/// Print events as they happen (text or JSON lines)
///
/// Records the user_events matching each PATTERN on every CPU and prints
/// them in time order, each with the thread and process that emitted it.
/// With CMD, runs it (held until recording has started), records until it
/// exits and exits with its status; otherwise records until Ctrl-C.
#[derive(Debug, Args)]
#[command(after_long_help = OUTPUT_HELP)]
pub struct RecordArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Write events to FILE instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// text: like perf script; json: one JSON object per line
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run_record(args: &RecordArgs) -> ExitCode {
    let sink: Box<dyn Write> = match &args.output {
        Some(path) => match File::create(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("usertrace record: cannot create {}: {e}; check the directory exists and is writable", path.display());
                return ExitCode::from(1);
            }
        },
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
    let mut write_failed = None;
    let mut line = Vec::new();
    let result = run(&args.run, "record", |output| {
        if let Output::Event(event) = output {
            line.clear();
            match args.format {
                Format::Text => text_line(&event, &mut line),
                Format::Json => write_line(&EventLine::new(&event), &mut line),
            }
            if write_failed.is_none() {
                if let Err(e) = out.write_all(&line) {
                    write_failed = Some(e);
                }
            }
        }
    });
    if let Err(e) = out.flush() {
        write_failed.get_or_insert(e);
    }
    match result {
        Ok(summary) => {
            print_summary("record", &summary);
            if let Some(e) = write_failed {
                eprintln!("usertrace record: writing events failed: {e}");
                return ExitCode::from(1);
            }
            summary.exit
        }
        Err(code) => code,
    }
}

/// One `perf script`-like line.
pub fn text_line(event: &Event, out: &mut Vec<u8>) {
    let secs = event.time_ns / 1_000_000_000;
    let micros = event.time_ns % 1_000_000_000 / 1_000;
    let comm = escape(&event.comm);
    let _ = write!(out, "{comm:>16} {}/{} [{:03}] {secs}.{micros:06}: {}:", event.pid, event.tid, event.cpu, event.name());
    match event.fields() {
        Ok(fields) => {
            for (name, value) in fields {
                let _ = match value {
                    FieldValue::Str(s) => write!(out, " {name}={}", escape(&s)),
                    other => write!(out, " {name}={other}"),
                };
            }
        }
        Err(e) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use usertrace::wire::dyn_loc;
    use usertrace_consumer::{EventFormat, Namespaces};

    fn event() -> Event {
        let format = EventFormat::parse(
            "user_events",
            "name: ping\nID: 9\n\tfield:u32 n;\toffset:8;\tsize:4;\tsigned:0;\n\
             \tfield:__rel_loc char msg[1];\toffset:12;\tsize:4;\tsigned:1;\n\
             \tfield:struct f64 x;\toffset:16;\tsize:8;\tsigned:0;\n",
        )
        .unwrap();
        let mut raw = vec![0u8; 8];
        raw.extend_from_slice(&12u32.to_ne_bytes());
        raw.extend_from_slice(&dyn_loc(8, 6).to_ne_bytes());
        raw.extend_from_slice(&f64::NAN.to_bits().to_ne_bytes());
        raw.extend_from_slice(b"a\"b\n\0");
        raw.push(0);
        Event {
            time_ns: 12_345_678_901,
            cpu: 1,
            pid: 10,
            tid: 11,
            comm: "worker".into(),
            process: "server".into(),
            namespaces: None,
            format: Arc::new(format),
            raw: raw.into(),
        }
    }

    /// An event of every value kind: u64 `a`, s64 `b`, bool `e`, f32 `f`,
    /// f64 `g`, string `s`, bytes `j`.
    fn every_kind(a: u64, b: i64, e: u8, f: f32, g: f64, s: &str, j: &[u8]) -> Event {
        let format = EventFormat::parse(
            "user_events",
            "name: kinds\nID: 7\n\tfield:u64 a;\toffset:8;\tsize:8;\tsigned:0;\n\
             \tfield:s64 b;\toffset:16;\tsize:8;\tsigned:1;\n\
             \tfield:unsigned char e;\toffset:24;\tsize:1;\tsigned:0;\n\
             \tfield:struct f32 f;\toffset:25;\tsize:4;\tsigned:0;\n\
             \tfield:struct f64 g;\toffset:29;\tsize:8;\tsigned:0;\n\
             \tfield:__rel_loc char s[];\toffset:37;\tsize:4;\tsigned:1;\n\
             \tfield:__rel_loc u8 j[];\toffset:41;\tsize:4;\tsigned:0;\n",
        )
        .unwrap();
        let mut raw = vec![0u8; 8];
        raw.extend_from_slice(&a.to_ne_bytes());
        raw.extend_from_slice(&b.to_ne_bytes());
        raw.push(e);
        raw.extend_from_slice(&f.to_bits().to_ne_bytes());
        raw.extend_from_slice(&g.to_bits().to_ne_bytes());
        let s_len = s.len() as u16 + 1;
        // Each offset counts from the end of its own location word.
        raw.extend_from_slice(&dyn_loc(4, s_len).to_ne_bytes());
        raw.extend_from_slice(&dyn_loc(s_len, j.len() as u16).to_ne_bytes());
        raw.extend_from_slice(s.as_bytes());
        raw.push(0);
        raw.extend_from_slice(j);
        Event { format: Arc::new(format), raw: raw.into(), ..event() }
    }

    fn text(event: &Event) -> String {
        let mut out = Vec::new();
        text_line(event, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn json(event: &Event) -> String {
        let mut out = Vec::new();
        write_line(&EventLine::new(event), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_lines_look_like_perf_script() {
        assert_eq!(text(&event()), "          worker 10/11 [001] 12.345678: ping: n=12 msg=a\"b\\n x=NaN\n");
    }

    #[test]
    fn text_lines_escape_control_characters_so_one_event_is_one_line() {
        let e = every_kind(1, -1, 1, 0.5, 2.0, "one\ntwo\tthree\r\\ \u{1b}[31m\u{7f}\u{9b}é", &[0xde, 0xad]);
        let line = text(&Event { comm: "bad\nname".into(), ..e });
        assert_eq!(line.lines().count(), 1, "{line}");
        assert_eq!(
            line,
            "       bad\\nname 10/11 [001] 12.345678: kinds: a=1 b=-1 e=true f=0.5 g=2 \
             s=one\\ntwo\\tthree\\r\\\\ \\x1b[31m\\x7f\\u{9b}é j=dead\n"
        );
    }

    #[test]
    fn json_lines_escape_strings_and_keep_numbers() {
        assert_eq!(
            json(&event()),
            "{\"time_ns\":12345678901,\"cpu\":1,\"pid\":10,\"tid\":11,\"comm\":\"worker\",\"process\":\"server\",\
             \"event\":\"ping\",\"fields\":{\"n\":12,\"msg\":\"a\\\"b\\n\",\"x\":\"NaN\"}}\n"
        );
    }

    #[test]
    fn json_lines_carry_namespaces_when_recorded() {
        let namespaces = Namespaces { net: 1, uts: 2, ipc: 3, pid: 4, user: 5, mnt: 6, cgroup: 7 };
        let s = json(&Event { namespaces: Some(Arc::new(namespaces)), ..event() });
        assert!(
            s.contains(
                "\"process\":\"server\",\"namespaces\":{\"net\":1,\"uts\":2,\"ipc\":3,\"pid\":4,\"user\":5,\"mnt\":6,\"cgroup\":7},\"event\""
            ),
            "{s}"
        );
    }

    #[test]
    fn json_lines_say_why_a_payload_did_not_decode() {
        let mut e = event();
        e.raw = e.raw[..10].into();
        let s = json(&e);
        assert!(s.contains("\"event\":\"ping\",\"fields\":{},\"error\":\""), "{s}");
        assert!(s.ends_with("\"}\n"), "{s}");
    }

    /// serde's lines are byte for byte what the hand-written writer they
    /// replaced printed, for values at every edge scripts may meet.
    #[test]
    fn json_lines_are_the_bytes_record_printed_before_serde() {
        let strings = ["", "plain", "héllo wörld", "\"quoted\" \\ /", "\u{0}\u{1}\u{8}\u{9}\u{a}\u{c}\u{d}\u{1f}\u{7f}\u{9b}\u{2028}"];
        let floats = [0.0, -0.0, 1.0, -2.25, 0.1, 1e20, 1e-7, f64::MAX, f64::MIN_POSITIVE, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let mut checked = 0;
        for (i, s) in strings.iter().enumerate() {
            for (k, g) in floats.iter().enumerate() {
                let f = *g as f32;
                let ints = [(0, 0), (u64::MAX, i64::MIN), (1 << 53, -(1 << 53) - 1)];
                let (a, b) = ints[(i + k) % ints.len()];
                let mut e = every_kind(a, b, (k % 3) as u8, f, *g, s, &[0, 0xff, k as u8]);
                if k % 2 == 0 {
                    e.namespaces = Some(Arc::new(Namespaces { net: u64::MAX, cgroup: 4026531835, ..Namespaces::default() }));
                }
                e.comm = (*s).into();
                let mut old = String::new();
                old_json_line(&e, &mut old);
                assert_eq!(json(&e), old);
                checked += 1;
            }
        }
        let mut broken = event();
        broken.raw = broken.raw[..10].into();
        let mut old = String::new();
        old_json_line(&broken, &mut old);
        assert_eq!(json(&broken), old);
        assert_eq!(checked, strings.len() * floats.len());
    }

    /// The JSON writer `record` had before serde, kept as the reference.
    fn old_json_line(event: &Event, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "{{\"time_ns\":{},\"cpu\":{},\"pid\":{},\"tid\":{},\"comm\":", event.time_ns, event.cpu, event.pid, event.tid);
        old_json_string(&event.comm, out);
        out.push_str(",\"process\":");
        old_json_string(&event.process, out);
        if let Some(namespaces) = &event.namespaces {
            out.push_str(",\"namespaces\":{");
            for (i, (kind, inode)) in namespaces.iter().enumerate() {
                let _ = write!(out, "{}\"{kind}\":{inode}", if i > 0 { "," } else { "" });
            }
            out.push('}');
        }
        out.push_str(",\"event\":");
        old_json_string(event.name(), out);
        out.push_str(",\"fields\":{");
        match event.fields() {
            Ok(fields) => {
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    old_json_string(name, out);
                    out.push(':');
                    match value {
                        FieldValue::Unsigned(v) => drop(write!(out, "{v}")),
                        FieldValue::Signed(v) => drop(write!(out, "{v}")),
                        FieldValue::Bool(v) => drop(write!(out, "{v}")),
                        FieldValue::F32(v) if v.is_finite() => drop(write!(out, "{v}")),
                        FieldValue::F64(v) if v.is_finite() => drop(write!(out, "{v}")),
                        other => old_json_string(&other.to_string(), out),
                    }
                }
                out.push('}');
            }
            Err(e) => {
                out.push_str("},\"error\":");
                old_json_string(&e.to_string(), out);
            }
        }
        out.push_str("}\n");
    }

    fn old_json_string(s: &str, out: &mut String) {
        use std::fmt::Write;
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => drop(write!(out, "\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

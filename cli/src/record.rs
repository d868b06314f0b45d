//! `usertrace record`: print every event, in time order, with who emitted it.
//!
//! text (like `perf script`):
//!   `COMM PID/TID [CPU] SECONDS.MICROS: EVENT: field=value ...`
//! json (one object per line):
//!   `{"time_ns":…,"cpu":…,"pid":…,"tid":…,"comm":…,"process":…,"event":…,"fields":{…}}`
//!   plus `"namespaces":{"net":…,"uts":…,"ipc":…,"pid":…,"user":…,"mnt":…,"cgroup":…}`
//!   (inode numbers, as `/proc/PID/ns/*` shows them) after `process` when
//!   the session may record them (CAP_PERFMON or root).
//! Strings are printed as they are (JSON-escaped in json), bytes as hex,
//! f32/f64 as numbers (non-finite ones as strings in json).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

use usertrace_consumer::{Event, FieldValue, Output};

use crate::run::{print_summary, run, RunArgs};

pub const USAGE: &str = "usage: usertrace record -e PATTERN... [-o FILE] [--format text|json] [--buffer-size PAGES] [-- CMD ARGS...]

Records user_events matching each PATTERN ([SYSTEM:]NAME, with * and ?) on
every CPU. With CMD, runs it, records until it exits and exits with its
status; otherwise records until Ctrl-C. Tracepoints registered later that
match a pattern are attached when they appear.
  -o FILE          write events to FILE instead of stdout
  --format F       text (default, like perf script) or json (JSON lines)
  --buffer-size N  data pages per CPU ring, a power of two (default 256)
";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

pub fn run_record(args: &[String]) -> ExitCode {
    if args.iter().take_while(|a| *a != "--").any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let mut output_path = None;
    let mut format = Format::Text;
    let parsed = RunArgs::parse(args, |arg, next| match arg {
        "-o" | "--output" => {
            output_path = Some(next.ok_or("-o needs a file name")?.clone());
            Ok(true)
        }
        "--format" => {
            format = match next.map(String::as_str) {
                Some("text") => Format::Text,
                Some("json") => Format::Json,
                other => return Err(format!("--format must be text or json, not {other:?}")),
            };
            Ok(true)
        }
        other => Err(format!("unknown option {other:?}")),
    });
    let parsed = match parsed {
        Ok(p) => p,
        Err(msg) => {
            eprintln!("usertrace record: {msg}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let sink: Box<dyn Write> = match &output_path {
        Some(path) => match File::create(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("usertrace record: cannot create {path}: {e}");
                return ExitCode::from(1);
            }
        },
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
    let mut write_failed = None;
    let mut line = String::new();
    let result = run(&parsed, "record", |output| {
        if let Output::Event(event) = output {
            line.clear();
            match format {
                Format::Text => text_line(&event, &mut line),
                Format::Json => json_line(&event, &mut line),
            }
            if write_failed.is_none() {
                if let Err(e) = out.write_all(line.as_bytes()) {
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
pub fn text_line(event: &Event, out: &mut String) {
    use std::fmt::Write;
    let secs = event.time_ns / 1_000_000_000;
    let micros = event.time_ns % 1_000_000_000 / 1_000;
    let _ = write!(out, "{:>16} {}/{} [{:03}] {secs}.{micros:06}: {}:", event.comm, event.pid, event.tid, event.cpu, event.name());
    match event.fields() {
        Ok(fields) => {
            for (name, value) in fields {
                let _ = write!(out, " {name}={value}");
            }
        }
        Err(e) => {
            let _ = write!(out, " <{e}>");
        }
    }
    out.push('\n');
}

/// One JSON line.
pub fn json_line(event: &Event, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(out, "{{\"time_ns\":{},\"cpu\":{},\"pid\":{},\"tid\":{},\"comm\":", event.time_ns, event.cpu, event.pid, event.tid);
    json_string(&event.comm, out);
    out.push_str(",\"process\":");
    json_string(&event.process, out);
    if let Some(namespaces) = &event.namespaces {
        out.push_str(",\"namespaces\":{");
        for (i, (kind, inode)) in namespaces.iter().enumerate() {
            let _ = write!(out, "{}\"{kind}\":{inode}", if i > 0 { "," } else { "" });
        }
        out.push('}');
    }
    out.push_str(",\"event\":");
    json_string(event.name(), out);
    out.push_str(",\"fields\":{");
    match event.fields() {
        Ok(fields) => {
            for (i, (name, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(name, out);
                out.push(':');
                json_value(value, out);
            }
            out.push('}');
        }
        Err(e) => {
            out.push_str("},\"error\":");
            json_string(&e.to_string(), out);
        }
    }
    out.push_str("}\n");
}

fn json_value(value: &FieldValue<'_>, out: &mut String) {
    use std::fmt::Write;
    match value {
        FieldValue::Unsigned(v) => {
            let _ = write!(out, "{v}");
        }
        FieldValue::Signed(v) => {
            let _ = write!(out, "{v}");
        }
        FieldValue::Bool(v) => {
            let _ = write!(out, "{v}");
        }
        FieldValue::F32(v) if v.is_finite() => {
            let _ = write!(out, "{v}");
        }
        FieldValue::F64(v) if v.is_finite() => {
            let _ = write!(out, "{v}");
        }
        other => json_string(&other.to_string(), out),
    }
}

fn json_string(s: &str, out: &mut String) {
    use std::fmt::Write;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
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
        raw.extend_from_slice(&usertrace::wire::dyn_loc(8, 6).to_ne_bytes());
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

    #[test]
    fn text_lines_look_like_perf_script() {
        let mut s = String::new();
        text_line(&event(), &mut s);
        assert_eq!(s, "          worker 10/11 [001] 12.345678: ping: n=12 msg=a\"b\n x=NaN\n");
    }

    #[test]
    fn json_lines_escape_strings_and_keep_numbers() {
        let mut s = String::new();
        json_line(&event(), &mut s);
        assert_eq!(
            s,
            "{\"time_ns\":12345678901,\"cpu\":1,\"pid\":10,\"tid\":11,\"comm\":\"worker\",\"process\":\"server\",\
             \"event\":\"ping\",\"fields\":{\"n\":12,\"msg\":\"a\\\"b\\n\",\"x\":\"NaN\"}}\n"
        );
    }

    #[test]
    fn json_lines_carry_namespaces_when_recorded() {
        let namespaces = Namespaces { net: 1, uts: 2, ipc: 3, pid: 4, user: 5, mnt: 6, cgroup: 7 };
        let mut s = String::new();
        json_line(&Event { namespaces: Some(Arc::new(namespaces)), ..event() }, &mut s);
        assert!(
            s.contains(
                "\"process\":\"server\",\"namespaces\":{\"net\":1,\"uts\":2,\"ipc\":3,\"pid\":4,\"user\":5,\"mnt\":6,\"cgroup\":7},\"event\""
            ),
            "{s}"
        );
    }
}

//! `--format json`: the JSON lines `usertrace` prints, one type per line.
//!
//! # A public contract
//!
//! Scripts parse these lines, so each field below keeps its name, type and
//! meaning. New fields may be added (parse by name, ignore what you do not
//! know); none is renamed, retyped or removed without a major version.
//! Every line is one JSON object followed by `\n`; no line holds a raw
//! newline.
//!
//! Values throughout:
//! - integers are exact decimal integers, u64 and i64 in full: values
//!   beyond 2^53 lose precision in parsers that read every number as a
//!   double (JavaScript's `JSON.parse`, jq before 1.7).
//! - floats are finite decimals with no exponent, the shortest that reads
//!   back to the same value (`1.5`, `-2.25`, `2`, `0.0000001`). A NaN or an
//!   infinity has no JSON number: it is the string `"NaN"`, `"inf"` or
//!   `"-inf"`.
//! - strings are UTF-8 (invalid bytes replaced by U+FFFD); `"` and `\`
//!   are escaped, as are control characters below U+0020: `\n`, `\r`, `\t`,
//!   others `\u00XX` (lowercase hex).
//! - paths are strings, non-UTF-8 bytes replaced by U+FFFD.
//!
//! ## `record --format json`: [`EventLine`], one per event, in time order
//!
//! | field        | type    | meaning |
//! |--------------|---------|---------|
//! | `time_ns`    | integer | CLOCK_MONOTONIC nanoseconds when the event was emitted |
//! | `cpu`        | integer | the CPU it was emitted on |
//! | `pid`        | integer | the emitting process (thread group) id |
//! | `tid`        | integer | the emitting thread id |
//! | `comm`       | string  | the thread's name at that time |
//! | `process`    | string  | the process's (main thread's) name at that time |
//! | `namespaces` | object  | only when the session may record them (CAP_PERFMON or root): `net`, `uts`, `ipc`, `pid`, `user`, `mnt`, `cgroup`, each the namespace's inode number as `/proc/PID/ns/*` shows it (0 where unknown) |
//! | `event`      | string  | the event's name, without its system |
//! | `fields`     | object  | the event's fields in declaration order: name → value |
//! | `error`      | string  | only when the payload could not be decoded; `fields` is then `{}` |
//!
//! A field value is an integer (unsigned and signed integer fields), `true`
//! or `false` (bool fields), a float (f32, f64), or a string (strings; byte
//! arrays as lowercase hex; non-finite floats as above).
//!
//! ## `stat --format json`: one [`StatLine`] when the run ends
//!
//! | field               | type    | meaning |
//! |---------------------|---------|---------|
//! | `counts`            | object  | event (`SYSTEM:NAME`) → events counted; every attached event shows, 0 if none came |
//! | `events`            | integer | the sum of `counts` |
//! | `skipped`           | integer | events left out because their pid was not given with `-p` (0 without `-p`) |
//! | `lost`              | integer | events lost because a CPU's ring was full (of any process) |
//! | `lost_by_cpu`       | array   | `{"cpu": integer, "lost": integer}` for each CPU that lost events, by CPU |
//! | `lost_task_records` | integer | task records lost, so some process names may be wrong |
//! | `malformed`         | integer | records that could not be parsed and were skipped (should be 0) |
//! | `seconds`           | float   | how long the session ran |
//!
//! ## `list --format json`: [`ListedEvent`], one per registered event
//!
//! | field     | type    | meaning |
//! |-----------|---------|---------|
//! | `event`   | string  | `SYSTEM:NAME`, as `record -e` and perf take it |
//! | `system`  | string  | `user_events` or `user_events_multi` |
//! | `name`    | string  | the tracepoint's name under tracefs |
//! | `id`      | integer | the tracepoint id (perf's `config`) |
//! | `fields`  | array   | `{"name": string, "type": string}` in declaration order, the type as tracefs prints it (`u32`, `__rel_loc char`) |
//! | `used_by` | array   | strings, who has it enabled (`ftrace`, `perf`, `other`); empty when nobody traces it |
//!
//! ## `status --format json`: one [`StatusLine`]
//!
//! | field         | type           | meaning |
//! |---------------|----------------|---------|
//! | `kernel`      | string         | the kernel release (`/proc/sys/kernel/osrelease`) |
//! | `tracefs`     | string or null | the tracefs mount point in use, null if none was found |
//! | `tried`       | array          | strings, the mount points looked at, in order |
//! | `user_events` | object         | `available` (bool); `state`: `available`, `tracefs_not_mounted`, `user_events_missing`, `permission_denied` or `open_failed`; `message` (string): what it means and what to do |
//! | `recording`   | object         | `allowed` (bool): whether `record` and `stat` may open their events; `perf_event_paranoid` (integer or null if unreadable); `cap_perfmon` (bool: CAP_PERFMON or CAP_SYS_ADMIN is effective); `message` (string) |

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;

use serde::ser::Serializer;
use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use usertrace_consumer::{Event, FieldValue};

/// One `record` event.
#[derive(Serialize)]
pub struct EventLine<'a> {
    pub time_ns: u64,
    pub cpu: u32,
    pub pid: u32,
    pub tid: u32,
    pub comm: &'a str,
    pub process: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Namespaces>,
    pub event: &'a str,
    #[serde(serialize_with = "ordered_map")]
    pub fields: Vec<(&'a str, Value<'a>)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl<'a> EventLine<'a> {
    pub fn new(event: &'a Event) -> EventLine<'a> {
        let (fields, error) = match event.fields() {
            Ok(fields) => (fields.into_iter().map(|(name, value)| (name, Value::from(value))).collect(), None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        EventLine {
            time_ns: event.time_ns,
            cpu: event.cpu,
            pid: event.pid,
            tid: event.tid,
            comm: &event.comm,
            process: &event.process,
            namespaces: event.namespaces.as_deref().map(|ns| Namespaces {
                net: ns.net,
                uts: ns.uts,
                ipc: ns.ipc,
                pid: ns.pid,
                user: ns.user,
                mnt: ns.mnt,
                cgroup: ns.cgroup,
            }),
            event: event.name(),
            fields,
            error,
        }
    }
}

/// Namespace inode numbers, in the kernel's order.
#[derive(Serialize)]
pub struct Namespaces {
    pub net: u64,
    pub uts: u64,
    pub ipc: u64,
    pub pid: u64,
    pub user: u64,
    pub mnt: u64,
    pub cgroup: u64,
}

/// A field value as JSON shows it.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Value<'a> {
    Unsigned(u64),
    Signed(i64),
    Bool(bool),
    F32(f32),
    F64(f64),
    /// Strings; bytes as hex and non-finite floats, in their text form.
    Text(Cow<'a, str>),
}

impl<'a> From<FieldValue<'a>> for Value<'a> {
    fn from(value: FieldValue<'a>) -> Value<'a> {
        match value {
            FieldValue::Unsigned(v) => Value::Unsigned(v),
            FieldValue::Signed(v) => Value::Signed(v),
            FieldValue::Bool(v) => Value::Bool(v),
            FieldValue::F32(v) if v.is_finite() => Value::F32(v),
            FieldValue::F64(v) if v.is_finite() => Value::F64(v),
            FieldValue::Str(s) => Value::Text(s),
            other => Value::Text(Cow::Owned(other.to_string())),
        }
    }
}

/// The summary of a `stat` run.
#[derive(Serialize)]
pub struct StatLine<'a> {
    pub counts: &'a BTreeMap<String, u64>,
    pub events: u64,
    pub skipped: u64,
    pub lost: u64,
    pub lost_by_cpu: Vec<CpuLost>,
    pub lost_task_records: u64,
    pub malformed: u64,
    pub seconds: f64,
}

#[derive(Serialize)]
pub struct CpuLost {
    pub cpu: u32,
    pub lost: u64,
}

/// One event of `list`.
#[derive(Serialize)]
pub struct ListedEvent<'a> {
    pub event: String,
    pub system: &'a str,
    pub name: &'a str,
    pub id: u64,
    pub fields: Vec<ListedField<'a>>,
    pub used_by: Vec<&'a str>,
}

#[derive(Serialize)]
pub struct ListedField<'a> {
    pub name: &'a str,
    #[serde(rename = "type")]
    pub type_name: &'a str,
}

/// What `status` found.
#[derive(Serialize)]
pub struct StatusLine {
    pub kernel: String,
    pub tracefs: Option<String>,
    pub tried: Vec<String>,
    pub user_events: UserEventsStatus,
    pub recording: RecordingStatus,
}

#[derive(Serialize)]
pub struct UserEventsStatus {
    pub available: bool,
    pub state: &'static str,
    pub message: String,
}

#[derive(Serialize)]
pub struct RecordingStatus {
    pub allowed: bool,
    pub perf_event_paranoid: Option<i32>,
    pub cap_perfmon: bool,
    pub message: String,
}

/// Appends `value` as one JSON line to `out`.
pub fn write_line(value: &impl Serialize, out: &mut Vec<u8>) {
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, LineFormatter);
    // Writing into a Vec cannot fail, and none of our types has a
    // serializer that errors (map keys are strings).
    value.serialize(&mut serializer).expect("JSON into memory");
    out.push(b'\n');
}

/// Prints `value` as one JSON line on stdout.
pub fn print_line(value: &impl Serialize) {
    let mut line = Vec::new();
    write_line(value, &mut line);
    print!("{}", String::from_utf8(line).expect("serde_json writes UTF-8"));
}

/// serde_json's output, with floats and two escapes as `record` has always
/// printed them, so lines stay byte-for-byte what scripts already parse.
struct LineFormatter;

impl Formatter for LineFormatter {
    /// Rust's `Display`: the shortest decimal that reads back the same,
    /// never an exponent, `2` rather than `2.0`. (Non-finite values never
    /// get here: [`Value`] makes them strings.)
    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        write!(writer, "{value}")
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        write!(writer, "{value}")
    }

    /// `\u0008` and `\u000c` rather than `\b` and `\f`: the same JSON, the
    /// same bytes as before serde.
    fn write_char_escape<W: ?Sized + io::Write>(&mut self, writer: &mut W, escape: CharEscape) -> io::Result<()> {
        match escape {
            CharEscape::Backspace => writer.write_all(b"\\u0008"),
            CharEscape::FormFeed => writer.write_all(b"\\u000c"),
            CharEscape::Quote => writer.write_all(b"\\\""),
            CharEscape::ReverseSolidus => writer.write_all(b"\\\\"),
            CharEscape::Solidus => writer.write_all(b"\\/"),
            CharEscape::LineFeed => writer.write_all(b"\\n"),
            CharEscape::CarriageReturn => writer.write_all(b"\\r"),
            CharEscape::Tab => writer.write_all(b"\\t"),
            CharEscape::AsciiControl(byte) => write!(writer, "\\u{byte:04x}"),
        }
    }
}

/// A list of pairs as a JSON object, in the list's order.
fn ordered_map<S: Serializer>(pairs: &[(&str, Value<'_>)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(value: &impl Serialize) -> String {
        let mut out = Vec::new();
        write_line(value, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_print_as_rust_displays_them() {
        let fields = vec![
            ("a", Value::F64(2.0)),
            ("b", Value::F64(1e20)),
            ("c", Value::F64(1e-7)),
            ("d", Value::F32(1.1)),
            ("e", Value::F64(-0.0)),
        ];
        #[derive(Serialize)]
        struct Fields<'a> {
            #[serde(serialize_with = "ordered_map")]
            f: Vec<(&'a str, Value<'a>)>,
        }
        assert_eq!(
            line(&Fields { f: fields }),
            "{\"f\":{\"a\":2,\"b\":100000000000000000000,\"c\":0.0000001,\"d\":1.1,\"e\":-0}}\n"
        );
    }

    #[test]
    fn big_integers_and_controls_stay_exact() {
        let fields = vec![
            ("u", Value::Unsigned(u64::MAX)),
            ("i", Value::Signed(i64::MIN)),
            ("s", Value::Text("\u{8}\u{c}\u{1}\u{1f}\u{7f}\"\\/é".into())),
        ];
        #[derive(Serialize)]
        struct Fields<'a> {
            #[serde(serialize_with = "ordered_map")]
            f: Vec<(&'a str, Value<'a>)>,
        }
        assert_eq!(
            line(&Fields { f: fields }),
            "{\"f\":{\"u\":18446744073709551615,\"i\":-9223372036854775808,\
             \"s\":\"\\u0008\\u000c\\u0001\\u001f\u{7f}\\\"\\\\/é\"}}\n"
        );
    }
}

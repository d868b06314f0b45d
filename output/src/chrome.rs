//! A [`Timeline`] in Chrome's Trace Event Format (JSON), for
//! chrome://tracing, speedscope, and Perfetto's legacy JSON importer:
//! `{"traceEvents":[...],"displayTimeUnit":"ns"}`.
//!
//! - `M` events, first, name each process (`process_name`) and thread
//!   (`thread_name`);
//! - thread spans are complete events, `X` with `dur`;
//! - async spans are `b`/`e` pairs with `cat` `span` and an `id` of their
//!   own;
//! - instants are `i` with `s` `t` (thread scope); lost markers `i` with
//!   `s` `g` (global), named as the timeline names them;
//! - `ts` and `dur` are microseconds as the format wants, written as
//!   decimals with three places so no nanosecond is lost (`12.345678901`
//!   s is `12345678.901`);
//! - args keep their types: integers, bools, floats (non-finite ones as
//!   strings), strings (bytes as hex);
//! - the events are in time order (of an `X`, its start).
//!
//! [`write()`] writes the [`TimelineItems`] of a
//! [`TimelineStream`](crate::timeline::TimelineStream) as they come, so a
//! recording of any size is converted in the memory of what it has open
//! at once; [`encode`] and [`write_file`] take a [`Timeline`] built whole.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::atomic_file::{write_atomically, FileError};
use crate::jsonl::write::FieldsJson;
use crate::jsonl::LineFormatter;
use crate::record::Value;
use crate::timeline::{Item, Placement, Timeline, TimelineItems, LOST_TRACK};

/// The `cat` of every span.
pub const SPAN_CATEGORY: &str = "span";

/// Bytes of events gathered for one write.
const WRITE_SIZE: usize = 64 << 10;

/// Writes `timeline` as Trace Event JSON to `path`, never half-written.
pub fn write_file(path: &Path, timeline: &Timeline) -> Result<(), FileError> {
    write_atomically(path, &encode(timeline))
}

/// The trace as JSON bytes.
pub fn encode(timeline: &Timeline) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + 160 * (timeline.spans.len() + timeline.instants.len()));
    // Into a Vec, from items in memory: nothing can fail.
    let _ = write(TimelineItems::of(timeline), &mut out);
    out
}

/// Writes the trace of `items` to `out` as they come: the names of
/// processes and threads first (from the tables), then an event per item
/// (a thread slice as one `X` at its begin; an async span's `b` and `e`
/// at its begin and end, with the span's serial as their `id`). Fails
/// when reading `items` or writing `out` does.
pub fn write(mut items: TimelineItems, out: &mut impl Write) -> io::Result<()> {
    let mut w = EventWriter { out: Vec::with_capacity(2 * WRITE_SIZE), first: true };
    w.out.extend_from_slice(b"{\"traceEvents\":[");
    let tables = items.tables();
    for p in tables.processes.values() {
        w.metadata("process_name", p.pid, p.pid, &p.shown_name());
    }
    for t in tables.threads.values() {
        w.metadata("thread_name", t.pid, t.tid, &t.name);
    }
    if items.has_lost() {
        w.metadata("process_name", 0, 0, LOST_TRACK);
    }
    for item in &mut items {
        match &item? {
            Item::Begin { span, serial } => match span.placement {
                Placement::Thread { .. } => {
                    w.begin("X", &span.name, span.pid, span.tid, span.start_ns);
                    w.out.extend_from_slice(b",\"dur\":");
                    micros(&mut w.out, span.duration_ns());
                    w.close(Some(&span.args));
                }
                Placement::Async { .. } => {
                    w.begin("b", &span.name, span.pid, span.tid, span.start_ns);
                    let _ = write!(w.out, ",\"id\":\"{serial}\"");
                    w.close(Some(&span.args));
                }
            },
            Item::End(end) => {
                if !end.placement.is_thread() {
                    w.begin("e", &end.name, end.pid, end.tid, end.time_ns);
                    let _ = write!(w.out, ",\"id\":\"{}\"", end.serial);
                    w.close(None);
                }
            }
            Item::Instant(instant) => {
                w.begin("i", &instant.name, instant.pid, instant.tid, instant.time_ns);
                w.out.extend_from_slice(b",\"s\":\"t\"");
                w.close(Some(&instant.args));
            }
            Item::Lost(lost) => {
                w.begin("i", &lost.name, 0, 0, lost.time_ns);
                w.out.extend_from_slice(b",\"s\":\"g\"");
                let args = [("count".to_owned(), Value::Unsigned(lost.count)), ("cpu".to_owned(), Value::Unsigned(u64::from(lost.cpu)))];
                w.close(Some(&args));
            }
            // Chrome's trace format has no thread states to draw them as.
            Item::Sched(_) => continue,
        }
        if w.out.len() >= WRITE_SIZE {
            out.write_all(&w.out)?;
            w.out.clear();
        }
    }
    w.out.extend_from_slice(b"],\"displayTimeUnit\":\"ns\"}\n");
    out.write_all(&w.out)
}

struct EventWriter {
    out: Vec<u8>,
    first: bool,
}

impl EventWriter {
    fn separator(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'\n');
    }

    fn metadata(&mut self, kind: &str, pid: u32, tid: u32, name: &str) {
        self.separator();
        let _ = write!(self.out, "{{\"ph\":\"M\",\"name\":\"{kind}\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":");
        string(&mut self.out, name);
        self.out.extend_from_slice(b"}}");
    }

    /// Opens an event object with its phase, name, ids and time.
    fn begin(&mut self, phase: &str, name: &str, pid: u32, tid: u32, time_ns: u64) {
        self.separator();
        let _ = write!(self.out, "{{\"ph\":\"{phase}\",\"name\":");
        string(&mut self.out, name);
        if phase != "i" {
            let _ = write!(self.out, ",\"cat\":\"{SPAN_CATEGORY}\"");
        }
        let _ = write!(self.out, ",\"pid\":{pid},\"tid\":{tid},\"ts\":");
        micros(&mut self.out, time_ns);
    }

    /// Adds `args` (if any) and closes the object.
    fn close(&mut self, args: Option<&[(String, Value)]>) {
        if let Some(args) = args.filter(|a| !a.is_empty()) {
            self.out.extend_from_slice(b",\"args\":");
            let mut serializer = serde_json::Serializer::with_formatter(&mut self.out, LineFormatter);
            // Into a Vec, with string keys: cannot fail.
            let _ = FieldsJson(args).serialize(&mut serializer);
        }
        self.out.push(b'}');
    }
}

/// `ns` as microseconds with three decimals: `1234567` → `1234.567`.
fn micros(out: &mut Vec<u8>, ns: u64) {
    let _ = write!(out, "{}.{:03}", ns / 1000, ns % 1000);
}

fn string(out: &mut Vec<u8>, s: &str) {
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, LineFormatter);
    let _ = s.serialize(&mut serializer);
}

#[cfg(test)]
mod tests;

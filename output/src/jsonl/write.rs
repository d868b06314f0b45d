//! Records as JSON lines (see the contract in [`crate::jsonl`]).

use std::io::{self, Write};
use std::path::Path;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::format::write_json_line;
use crate::atomic_file::{AtomicFile, FileError};
use crate::record::{ClockRecord, EventRecord, ExitRecord, LostRecord, Namespaces, ProcessRecord, Record, Value};

/// Appends `record` as one JSON line to `out`.
pub fn write_record(record: &Record, out: &mut Vec<u8>) {
    match record {
        Record::Event(e) => write_json_line(&EventLine(e), out),
        Record::Process(p) => write_json_line(&ProcessLine::from(p), out),
        Record::Exit(x) => write_json_line(&ExitLine::from(x), out),
        Record::Lost(l) => write_json_line(&LostLine::from(l), out),
        Record::Clock(c) => write_json_line(&ClockLine::from(c), out),
    }
}

/// Writes records as JSON lines to any writer, one buffer reused.
#[derive(Debug)]
pub struct JsonlWriter<W: Write> {
    out: W,
    line: Vec<u8>,
}

impl<W: Write> JsonlWriter<W> {
    /// A writer into `out` (buffer it: each record is one `write_all`).
    pub fn new(out: W) -> JsonlWriter<W> {
        JsonlWriter { out, line: Vec::with_capacity(512) }
    }

    /// Writes one record as one line.
    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        self.line.clear();
        write_record(record, &mut self.line);
        self.out.write_all(&self.line)
    }

    /// The writer it wraps.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Writes `records` to `path` as JSON lines, never leaving it half-written.
pub fn write_file(path: &Path, records: &[Record]) -> Result<(), FileError> {
    let mut writer = JsonlWriter::new(AtomicFile::create(path)?);
    for record in records {
        if let Err(e) = writer.write(record) {
            return Err(FileError { path: path.to_owned(), what: "writing failed", source: e });
        }
    }
    writer.into_inner().commit()
}

/// An event line: `type` first, then the fields in the order `record`
/// has always printed them.
struct EventLine<'a>(&'a EventRecord);

impl Serialize for EventLine<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "event")?;
        map.serialize_entry("time_ns", &e.time_ns)?;
        map.serialize_entry("cpu", &e.cpu)?;
        map.serialize_entry("pid", &e.pid)?;
        map.serialize_entry("tid", &e.tid)?;
        map.serialize_entry("comm", &e.comm)?;
        map.serialize_entry("process", &e.process)?;
        if let Some(ns) = &e.namespaces {
            map.serialize_entry("namespaces", &NamespacesJson(ns))?;
        }
        map.serialize_entry("event", &e.event)?;
        map.serialize_entry("fields", &FieldsJson(&e.fields))?;
        if let Some(error) = &e.error {
            map.serialize_entry("error", error)?;
        }
        map.end()
    }
}

/// Namespace inode numbers, in the kernel's order.
struct NamespacesJson<'a>(&'a Namespaces);

impl Serialize for NamespacesJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let n = self.0;
        let mut map = serializer.serialize_map(Some(7))?;
        for (kind, inode) in [("net", n.net), ("uts", n.uts), ("ipc", n.ipc), ("pid", n.pid), ("user", n.user), ("mnt", n.mnt), ("cgroup", n.cgroup)] {
            map.serialize_entry(kind, &inode)?;
        }
        map.end()
    }
}

/// The fields as one object, in declaration order.
pub(crate) struct FieldsJson<'a>(pub(crate) &'a [(String, Value)]);

impl Serialize for FieldsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (name, ValueJson(value))))
    }
}

/// A field value as the contract shows it.
pub(crate) struct ValueJson<'a>(pub(crate) &'a Value);

impl Serialize for ValueJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Unsigned(v) => serializer.serialize_u64(*v),
            Value::Signed(v) => serializer.serialize_i64(*v),
            Value::Bool(v) => serializer.serialize_bool(*v),
            Value::F32(v) if v.is_finite() => serializer.serialize_f32(*v),
            Value::F64(v) if v.is_finite() => serializer.serialize_f64(*v),
            Value::Str(s) => serializer.serialize_str(s),
            // Non-finite floats ("NaN", "inf", "-inf") and bytes (hex).
            other => serializer.collect_str(other),
        }
    }
}

#[derive(Serialize)]
struct ProcessLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    time_ns: u64,
    pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    executable: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command_line: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    container_id: Option<&'a str>,
}

impl<'a> From<&'a ProcessRecord> for ProcessLine<'a> {
    fn from(p: &'a ProcessRecord) -> Self {
        ProcessLine {
            kind: "process",
            time_ns: p.time_ns,
            pid: p.pid,
            executable: p.executable.as_deref(),
            command_line: p.command_line.as_deref(),
            container_id: p.container_id.as_deref(),
        }
    }
}

#[derive(Serialize)]
struct ClockLine {
    #[serde(rename = "type")]
    kind: &'static str,
    time_ns: u64,
    unix_ns: u64,
}

impl From<&ClockRecord> for ClockLine {
    fn from(c: &ClockRecord) -> Self {
        ClockLine { kind: "clock", time_ns: c.time_ns, unix_ns: c.unix_ns }
    }
}

#[derive(Serialize)]
struct ExitLine {
    #[serde(rename = "type")]
    kind: &'static str,
    time_ns: u64,
    pid: u32,
    tid: u32,
}

impl From<&ExitRecord> for ExitLine {
    fn from(x: &ExitRecord) -> Self {
        ExitLine { kind: "exit", time_ns: x.time_ns, pid: x.pid, tid: x.tid }
    }
}

#[derive(Serialize)]
struct LostLine {
    #[serde(rename = "type")]
    kind: &'static str,
    time_ns: u64,
    cpu: u32,
    count: u64,
    sideband: bool,
}

impl From<&LostRecord> for LostLine {
    fn from(l: &LostRecord) -> Self {
        LostLine { kind: "lost", time_ns: l.time_ns, cpu: l.cpu, count: l.count, sideband: l.sideband }
    }
}

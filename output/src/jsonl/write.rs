//! Records as JSON lines (see the contract in [`crate::jsonl`]).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use serde_json::value::RawValue;

use super::format::{write_json_line, LineFormatter};
use crate::atomic_file::{AtomicFile, FileError};
use crate::record::{ClockRecord, EventRecord, ExitRecord, Hex, LostRecord, Namespaces, ProcessRecord, Record, StackFrame, Value, ValueRef};

/// Appends `record` as one JSON line to `out`.
pub fn write_record(record: &Record, out: &mut Vec<u8>) {
    match record {
        Record::Event(e) => write_json_line(&EventLine::of(e), out),
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

/// An event line, its parts borrowed: `type` first, then the fields in the
/// order `record` has always printed them.
///
/// [`write_record`] writes an [`EventRecord`] through it
/// ([`EventLine::of`]); a caller holding an event of its own (the live
/// recorder, with a decoded payload) fills one in directly and writes it
/// with [`write_json_line`], so the line is the same with no owned record
/// built first. `fields` is what serializes as the `fields` object:
/// [`FieldRefs`], or the record's own fields.
#[derive(Debug)]
pub struct EventLine<'a, F> {
    /// When it was emitted.
    pub time_ns: u64,
    /// The CPU it was emitted on.
    pub cpu: u32,
    /// The emitting process id.
    pub pid: u32,
    /// The emitting thread id.
    pub tid: u32,
    /// The thread's name.
    pub comm: &'a str,
    /// The process's name.
    pub process: &'a str,
    /// Its namespaces, where known: the values, or their object as a
    /// [`NamespacesJsonCache`] wrote it for an earlier line.
    pub namespaces: Option<NamespacesRef<'a>>,
    /// The event's name.
    pub event: &'a str,
    /// The tracepoint, where it is not the event's name.
    pub tracepoint: Option<&'a str>,
    /// The fields, in declaration order.
    pub fields: F,
    /// Why the payload could not be decoded.
    pub error: Option<&'a str>,
    /// The user stack, innermost first; written only when there is one.
    pub stack: &'a [StackFrame],
}

impl<'a> EventLine<'a, FieldsJson<'a>> {
    /// The line of `e`.
    pub fn of(e: &'a EventRecord) -> Self {
        EventLine {
            time_ns: e.time_ns,
            cpu: e.cpu,
            pid: e.pid,
            tid: e.tid,
            comm: &e.comm,
            process: &e.process,
            namespaces: e.namespaces.as_ref().map(NamespacesRef::Values),
            event: &e.event,
            tracepoint: e.tracepoint.as_deref(),
            fields: FieldsJson(&e.fields),
            error: e.error.as_deref(),
            stack: &e.stack,
        }
    }
}

impl<F: Serialize> Serialize for EventLine<'_, F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "event")?;
        map.serialize_entry("time_ns", &self.time_ns)?;
        map.serialize_entry("cpu", &self.cpu)?;
        map.serialize_entry("pid", &self.pid)?;
        map.serialize_entry("tid", &self.tid)?;
        map.serialize_entry("comm", self.comm)?;
        map.serialize_entry("process", self.process)?;
        if let Some(ns) = self.namespaces {
            map.serialize_entry("namespaces", &ns)?;
        }
        map.serialize_entry("event", self.event)?;
        if let Some(tracepoint) = self.tracepoint {
            map.serialize_entry("tracepoint", tracepoint)?;
        }
        map.serialize_entry("fields", &self.fields)?;
        if let Some(error) = self.error {
            map.serialize_entry("error", error)?;
        }
        if !self.stack.is_empty() {
            map.serialize_entry("stack", self.stack)?;
        }
        map.end()
    }
}

/// An event line's `namespaces`: the values, written out, or the object
/// already written for an earlier line with the same.
#[derive(Debug, Clone, Copy)]
pub enum NamespacesRef<'a> {
    /// The inode numbers, written out on this line.
    Values(&'a Namespaces),
    /// Their JSON object, as [`NamespacesJsonCache`] wrote it; copied as is.
    Json(&'a RawValue),
}

impl Serialize for NamespacesRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            NamespacesRef::Values(ns) => NamespacesJson(ns).serialize(serializer),
            NamespacesRef::Json(json) => json.serialize(serializer),
        }
    }
}

/// The `namespaces` object of the last line written, kept for the next
/// line with the same namespaces. A recording's events come from a few
/// sets of namespaces (one per container), and writing the seven names and
/// inode numbers out was, measured natively, about a third of an event
/// line's time. One set is kept, not a map, for the common case of one:
/// events of two containers in turn are written out each time, plus the
/// copy kept (an allocation per line). The bytes are serde's, by the same
/// formatter, so a line is the same either way.
#[derive(Debug, Default)]
pub struct NamespacesJsonCache {
    last: Option<(Namespaces, Box<RawValue>)>,
}

impl NamespacesJsonCache {
    /// `namespaces` for an [`EventLine`]: the object written for the
    /// previous call if it had the same, else written now and kept.
    pub fn get<'a>(&'a mut self, namespaces: &'a Namespaces) -> NamespacesRef<'a> {
        if !matches!(&self.last, Some((kept, _)) if kept == namespaces) {
            let mut json = Vec::with_capacity(160);
            let mut serializer = serde_json::Serializer::with_formatter(&mut json, LineFormatter);
            // None of these can fail (a Vec, numbers, then serde's own JSON
            // read back), but if one did, the line writes the values out.
            let written = NamespacesJson(namespaces).serialize(&mut serializer).ok().and_then(|()| String::from_utf8(json).ok());
            match written.and_then(|json| RawValue::from_string(json).ok()) {
                Some(json) => self.last = Some((*namespaces, json)),
                None => return NamespacesRef::Values(namespaces),
            }
        }
        match &self.last {
            Some((_, json)) => NamespacesRef::Json(json),
            None => NamespacesRef::Values(namespaces),
        }
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
#[derive(Debug)]
pub struct FieldsJson<'a>(pub(crate) &'a [(String, Value)]);

impl Serialize for FieldsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (name, ValueJson(value.into()))))
    }
}

/// Borrowed fields as one object, in declaration order: the `fields` of an
/// [`EventLine`] written straight from a decoded payload, handed out by an
/// iterator (cloned to serialize, so it should be cheap to clone) so that
/// no vector of them is built for one line.
#[derive(Debug)]
pub struct FieldRefs<I>(pub I);

impl<'a, I: Iterator<Item = (&'a str, ValueRef<'a>)> + Clone> Serialize for FieldRefs<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.clone().map(|(name, value)| (name, ValueJson(value))))
    }
}

/// A field value as the contract shows it.
pub(crate) struct ValueJson<'a>(pub(crate) ValueRef<'a>);

impl Serialize for ValueJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ValueRefJson(&self.0).serialize(serializer)
    }
}

/// [`ValueJson`] by reference, for the members of arrays and structs.
struct ValueRefJson<'r, 'a>(&'r ValueRef<'a>);

impl Serialize for ValueRefJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self.0 {
            ValueRef::Unsigned(v) => serializer.serialize_u64(v),
            ValueRef::Signed(v) => serializer.serialize_i64(v),
            ValueRef::Bool(v) => serializer.serialize_bool(v),
            ValueRef::F32(v) if v.is_finite() => serializer.serialize_f32(v),
            ValueRef::F64(v) if v.is_finite() => serializer.serialize_f64(v),
            ValueRef::Str(s) => serializer.serialize_str(s),
            // Non-finite floats ("NaN", "inf", "-inf") and bytes (hex), as
            // Value prints them.
            ValueRef::F32(v) => serializer.collect_str(&v),
            ValueRef::F64(v) => serializer.collect_str(&v),
            ValueRef::Bytes(b) => serializer.collect_str(&Hex(b)),
            // As tracepoint_decode's JSON gives them: arrays as arrays,
            // structs as objects with their members in order.
            ValueRef::Array(ref items) => serializer.collect_seq(items.iter().map(ValueRefJson)),
            ValueRef::Struct(ref members) => {
                serializer.collect_map(members.iter().map(|(name, value)| (*name, ValueRefJson(value))))
            }
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
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    resource: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pod_uid: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid_in_container: Option<u32>,
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
            resource: &p.resource,
            pod_uid: p.pod_uid.as_deref(),
            pid_in_container: p.pid_in_container,
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

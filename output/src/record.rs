//! The neutral record model: what a recording holds, whichever format it
//! is written in. Every writer takes [`Record`]s; the JSON-lines reader
//! gives them back.
//!
//! Times are CLOCK_MONOTONIC nanoseconds, as the kernel stamps events.

use std::collections::BTreeMap;

/// One thing that happened during a recording, in time order.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A tracepoint hit.
    Event(EventRecord),
    /// A process was seen: at exec, or the first time the recording met its
    /// pid.
    Process(ProcessRecord),
    /// A thread exited (the process, when `tid == pid`).
    Exit(ExitRecord),
    /// Records were dropped because a ring was full.
    Lost(LostRecord),
    /// The wall clock, read beside the recording's clock: what turns its
    /// times into Unix times later, on any machine.
    Clock(ClockRecord),
}

impl Record {
    /// When it happened (for [`LostRecord`], when the loss was reported).
    pub fn time_ns(&self) -> u64 {
        match self {
            Record::Event(e) => e.time_ns,
            Record::Process(p) => p.time_ns,
            Record::Exit(e) => e.time_ns,
            Record::Lost(l) => l.time_ns,
            Record::Clock(c) => c.time_ns,
        }
    }

    /// `records` in time order: as given when they already are, else
    /// sorted, stably, so that records of equal time keep their order.
    pub fn in_time_order(records: &[Record]) -> std::borrow::Cow<'_, [Record]> {
        if records.windows(2).all(|w| w[0].time_ns() <= w[1].time_ns()) {
            return std::borrow::Cow::Borrowed(records);
        }
        let mut sorted = records.to_vec();
        sorted.sort_by_key(Record::time_ns);
        std::borrow::Cow::Owned(sorted)
    }
}

/// One tracepoint hit, with who emitted it.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// When it was emitted.
    pub time_ns: u64,
    /// The CPU it was emitted on.
    pub cpu: u32,
    /// The emitting process (thread group) id.
    pub pid: u32,
    /// The emitting thread id.
    pub tid: u32,
    /// The thread's name at that time.
    pub comm: String,
    /// The process's (main thread's) name at that time.
    pub process: String,
    /// The emitting task's namespaces, where the recorder could see them.
    pub namespaces: Option<Namespaces>,
    /// The event's name, without its system (`myapp_request`). An
    /// EventHeader event is named `Provider:Event`, as Microsoft's decoders
    /// name it, since many such events share one tracepoint.
    pub event: String,
    /// The tracepoint the event came through, where that is not `event`
    /// (an EventHeader event's `Provider_L4K1`); `None` otherwise.
    pub tracepoint: Option<String>,
    /// The fields in declaration order.
    pub fields: Vec<(String, Value)>,
    /// Why the payload could not be decoded; `fields` is then empty.
    pub error: Option<String>,
    /// The emitting thread's user stack, innermost frame first, where the
    /// recording has it (`usertrace record --call-graph fp`); else empty.
    pub stack: Vec<StackFrame>,
}

/// One frame of an event's stack, named where the program's files allow.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StackFrame {
    /// The address in the process: where the thread was for the first
    /// frame, a return address for the others.
    pub address: u64,
    /// The file mapped at the address, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// The address's offset in `module`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_offset: Option<u64>,
    /// The function, demangled, where the file names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The source file, where the file has line information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line in `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

impl EventRecord {
    /// The value of the field `name`, if the event has one; `a.b` names
    /// member `b` of struct field `a` ([`find_field`]).
    pub fn field(&self, name: &str) -> Option<&Value> {
        find_field(&self.fields, name)
    }
}

/// The value at `path` among `fields`: the field of that exact name, else,
/// for `a.b.c`, member `c` of struct member `b` of struct field `a`
/// (the core's rule, [`usertrace::find_field_by_path`]). A JSON-lines file
/// of 0.1.0 holds a struct's members as flat fields named `a.b.c`, which
/// the exact name finds.
pub fn find_field<'a>(fields: &'a [(String, Value)], path: &str) -> Option<&'a Value> {
    usertrace::find_field_by_path(fields, path, |v| match v {
        Value::Struct(members) => Some(members.as_slice()),
        _ => None,
    })
}

/// Namespace inode numbers as `/proc/PID/ns/*` shows them, 0 where unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each is the namespace of its name
pub struct Namespaces {
    pub net: u64,
    pub uts: u64,
    pub ipc: u64,
    pub pid: u64,
    pub user: u64,
    pub mnt: u64,
    pub cgroup: u64,
}

/// A field value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An unsigned integer of any width.
    Unsigned(u64),
    /// A signed integer of any width.
    Signed(i64),
    /// A bool field.
    Bool(bool),
    /// An f32 field. Kept apart from [`Value::F64`] because it prints as
    /// the shortest decimal of the f32 (`1.1`, not `1.100000023841858`).
    F32(f32),
    /// An f64 field.
    F64(f64),
    /// A string.
    Str(String),
    /// A bytes field.
    Bytes(Vec<u8>),
    /// An array of values (an EventHeader array), in order.
    Array(Vec<Value>),
    /// A struct (an EventHeader struct): its members, in declaration order.
    Struct(Vec<(String, Value)>),
}

/// A field value borrowed from wherever it lives, as the JSON-lines writer
/// takes it: a live recorder writes an event's line from its decoded
/// payload this way, with no owned copy of its strings
/// ([`jsonl::EventLine`](crate::jsonl::EventLine)). Scalars borrow; an
/// array or a struct holds its borrowed members in a vector of its own.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // each is its `Value` namesake, borrowed
pub enum ValueRef<'a> {
    Unsigned(u64),
    Signed(i64),
    Bool(bool),
    F32(f32),
    F64(f64),
    Str(&'a str),
    Bytes(&'a [u8]),
    Array(Vec<ValueRef<'a>>),
    Struct(Vec<(&'a str, ValueRef<'a>)>),
}

impl<'a> From<&'a Value> for ValueRef<'a> {
    fn from(value: &'a Value) -> Self {
        match value {
            Value::Unsigned(v) => ValueRef::Unsigned(*v),
            Value::Signed(v) => ValueRef::Signed(*v),
            Value::Bool(v) => ValueRef::Bool(*v),
            Value::F32(v) => ValueRef::F32(*v),
            Value::F64(v) => ValueRef::F64(*v),
            Value::Str(s) => ValueRef::Str(s),
            Value::Bytes(b) => ValueRef::Bytes(b),
            Value::Array(items) => ValueRef::Array(items.iter().map(ValueRef::from).collect()),
            Value::Struct(members) => ValueRef::Struct(members.iter().map(|(n, v)| (n.as_str(), v.into())).collect()),
        }
    }
}

impl From<ValueRef<'_>> for Value {
    fn from(value: ValueRef<'_>) -> Self {
        match value {
            ValueRef::Unsigned(v) => Value::Unsigned(v),
            ValueRef::Signed(v) => Value::Signed(v),
            ValueRef::Bool(v) => Value::Bool(v),
            ValueRef::F32(v) => Value::F32(v),
            ValueRef::F64(v) => Value::F64(v),
            ValueRef::Str(s) => Value::Str(s.to_owned()),
            ValueRef::Bytes(b) => Value::Bytes(b.to_vec()),
            ValueRef::Array(items) => Value::Array(items.into_iter().map(Value::from).collect()),
            ValueRef::Struct(members) => {
                Value::Struct(members.into_iter().map(|(n, v)| (n.to_owned(), Value::from(v))).collect())
            }
        }
    }
}

impl Value {
    /// The value as a u64, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Unsigned(v) => Some(v),
            Value::Signed(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as an f64, if it is a float (f32 widened).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(f64::from(v)),
            Value::F64(v) => Some(v),
            _ => None,
        }
    }
}

impl std::fmt::Display for Value {
    /// The text form `usertrace record` prints: numbers in decimal, floats
    /// as Rust prints them (`NaN`, `inf`), strings as they are, bytes as
    /// lowercase hex, arrays as `[1, 2]` and structs as `{x=1, y=2}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Unsigned(v) => write!(f, "{v}"),
            Value::Signed(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Str(s) => f.write_str(s),
            Value::Bytes(b) => Hex(b).fmt(f),
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    write!(f, "{}{item}", if i > 0 { ", " } else { "" })?;
                }
                f.write_str("]")
            }
            Value::Struct(members) => {
                f.write_str("{")?;
                for (i, (name, value)) in members.iter().enumerate() {
                    write!(f, "{}{name}={value}", if i > 0 { ", " } else { "" })?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Bytes as lowercase hex, as every output shows a bytes field.
pub(crate) struct Hex<'a>(pub(crate) &'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|x| write!(f, "{x:02x}"))
    }
}

/// A process, seen at exec or the first time the recording met its pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRecord {
    /// When it was seen.
    pub time_ns: u64,
    /// Its id.
    pub pid: u32,
    /// The full path of the executable it runs, where known.
    pub executable: Option<String>,
    /// Its command line (argv), where known.
    pub command_line: Option<Vec<String>>,
    /// The container it runs in, where it runs in one (64 hex digits).
    pub container_id: Option<String>,
    /// The OpenTelemetry resource it declares (`service.name` and the
    /// rest, from its `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`);
    /// empty if none.
    pub resource: BTreeMap<String, String>,
    /// The uid of the Kubernetes pod it runs in, where its cgroup names one.
    pub pod_uid: Option<String>,
    /// Its pid inside its own PID namespace, where that is not `pid`.
    pub pid_in_container: Option<u32>,
}

/// A thread exited; `tid == pid` means the whole process did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitRecord {
    /// When it exited.
    pub time_ns: u64,
    /// Its process.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
}

/// `count` records were dropped on `cpu` because its ring was full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostRecord {
    /// When the kernel reported the loss (after the dropped records).
    pub time_ns: u64,
    /// The CPU whose ring overflowed.
    pub cpu: u32,
    /// How many records were dropped.
    pub count: u64,
    /// Whether they were task (sideband) records rather than events, so
    /// some names may be wrong.
    pub sideband: bool,
}

/// CLOCK_REALTIME read at the same moment as CLOCK_MONOTONIC `time_ns`.
///
/// A recording's times are monotonic: nanoseconds since this machine
/// booted. Written at the start of a recording file, this pair converts
/// them to Unix times after a reboot or on another machine, where the
/// clocks of the moment would say nothing about the recording's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockRecord {
    /// CLOCK_MONOTONIC, in ns.
    pub time_ns: u64,
    /// CLOCK_REALTIME at the same moment: ns since the Unix epoch.
    pub unix_ns: u64,
}

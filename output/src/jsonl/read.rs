//! Reading JSON lines back into [`Record`]s, one line at a time, with an
//! error that names the line and what was wrong with it.
//!
//! Only one line is held at once, and no line beyond [`MAX_LINE_BYTES`]:
//! reading stops at the limit, so a corrupt file with no newline for
//! gigabytes is an error, not an exhausted memory.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::record::{ClockRecord, EventRecord, ExitRecord, LostRecord, Namespaces, ProcessRecord, Record, StackFrame, Value};

/// The longest line read, newline included: 16 MiB. `usertrace record`
/// writes lines of a few hundred bytes; an event's payload is at most
/// 64 KiB, which even as hex escapes stays far below this.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Reads records from JSON lines, one per [`Iterator::next`]. Blank lines
/// and lines of a kind this version does not know are skipped.
#[derive(Debug)]
pub struct Reader<R> {
    input: R,
    line: Vec<u8>,
    number: u64,
    failed: bool,
}

impl<R: BufRead> Reader<R> {
    /// A reader of `input`.
    pub fn new(input: R) -> Reader<R> {
        Reader { input, line: Vec::new(), number: 0, failed: false }
    }

    /// The number of the last line read (1 for the first).
    pub fn line_number(&self) -> u64 {
        self.number
    }

    fn next_record(&mut self) -> Option<Result<Record, ReadError>> {
        loop {
            self.line.clear();
            self.number += 1;
            // One byte past the limit tells a line of exactly the limit
            // from a longer one.
            match (&mut self.input).take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut self.line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(source) => return Some(Err(ReadError::Io { line: self.number, source })),
            }
            let complete = self.line.last() == Some(&b'\n');
            if !complete && self.line.len() > MAX_LINE_BYTES {
                self.line = Vec::new();
                return Some(Err(ReadError::LineTooLong { line: self.number, limit: MAX_LINE_BYTES }));
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match parse_line(&self.line, self.number, complete) {
                Ok(Some(record)) => return Some(Ok(record)),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Record, ReadError>;

    /// The next record; after an error, `None` (a line-oriented file that
    /// is corrupt in one place is not trusted further).
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_record();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

/// What [`open`] reads: a file, or standard input.
pub type Input = Box<dyn BufRead + Send>;

/// A reader of the recording at `path`, or of standard input when `path`
/// is `-`, as every command that takes a recording spells it. Records
/// come one at a time, so memory stays that of one line whatever the size
/// of the file.
pub fn open(path: &Path) -> Result<Reader<Input>, ReadError> {
    let input: Input = if path.as_os_str() == "-" {
        Box::new(BufReader::with_capacity(1 << 16, io::stdin()))
    } else {
        let file = std::fs::File::open(path).map_err(|source| ReadError::Open { path: path.to_owned(), source })?;
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    Ok(Reader::new(input))
}

/// How messages name what [`open`] reads: the path, or `standard input`.
pub fn input_name(path: &Path) -> std::borrow::Cow<'_, str> {
    if path.as_os_str() == "-" {
        "standard input".into()
    } else {
        path.to_string_lossy()
    }
}

/// Reads every record of the file at `path` (`-`: standard input) into
/// memory; [`open`] reads them one at a time.
pub fn read_file(path: &Path) -> Result<Vec<Record>, ReadError> {
    open(path)?.collect()
}

/// What was wrong with the input, and where.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be opened.
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Reading failed.
    Io {
        /// The line being read (1 for the first).
        line: u64,
        /// Why.
        source: io::Error,
    },
    /// A line is not valid JSON, or a field has the wrong type.
    Syntax {
        /// The line (1 for the first).
        line: u64,
        /// The byte column where the parser stopped (1 for the first).
        column: usize,
        /// What the parser expected or found.
        message: String,
        /// Whether the file may have been cut short here: the line is the
        /// last and has no newline. A bad line that ends in a newline was
        /// written whole, so it is corrupt, not truncated.
        truncated: bool,
    },
    /// A line is longer than [`MAX_LINE_BYTES`]; it was read no further.
    LineTooLong {
        /// The line (1 for the first).
        line: u64,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A line of a known kind lacks a field that kind must have.
    Missing {
        /// The line (1 for the first).
        line: u64,
        /// The line's `type`.
        kind: &'static str,
        /// The missing field.
        field: &'static str,
    },
}

impl ReadError {
    /// The line it concerns, if any (1 for the first).
    pub fn line(&self) -> Option<u64> {
        match self {
            ReadError::Open { .. } => None,
            ReadError::Io { line, .. }
            | ReadError::Syntax { line, .. }
            | ReadError::LineTooLong { line, .. }
            | ReadError::Missing { line, .. } => Some(*line),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Open { path, source } => write!(f, "cannot open {}: {source}", path.display()),
            ReadError::Io { line, source } => write!(f, "line {line}: reading failed: {source}"),
            ReadError::Syntax { line, column, message, truncated } => {
                let hint = if *truncated {
                    "the file may be truncated (was the recording cut short?)"
                } else {
                    "the line is not one `usertrace record --format json` writes; the file may be corrupt"
                };
                write!(f, "line {line}: {message} at column {column}; {hint}")
            }
            ReadError::LineTooLong { line, limit } => write!(
                f,
                "line {line}: longer than {} MiB, the most a line may be; the line is not one `usertrace record --format json` writes, the file may be corrupt",
                limit >> 20
            ),
            ReadError::Missing { line, kind, field } => write!(
                f,
                "line {line}: a \"{kind}\" line has no \"{field}\"; the line is not one `usertrace record --format json` writes"
            ),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Open { source, .. } | ReadError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// One line as JSON: every field any kind may have, checked per kind after.
#[derive(Deserialize)]
struct AnyLine {
    #[serde(rename = "type")]
    kind: Option<String>,
    time_ns: Option<u64>,
    cpu: Option<u32>,
    pid: Option<u32>,
    tid: Option<u32>,
    comm: Option<String>,
    process: Option<String>,
    namespaces: Option<NamespacesLine>,
    event: Option<String>,
    tracepoint: Option<String>,
    fields: Option<FieldList>,
    error: Option<String>,
    executable: Option<String>,
    command_line: Option<Vec<String>>,
    container_id: Option<String>,
    #[serde(default)]
    resource: BTreeMap<String, String>,
    pod_uid: Option<String>,
    pid_in_container: Option<u32>,
    count: Option<u64>,
    unix_ns: Option<u64>,
    sideband: Option<bool>,
    #[serde(default)]
    stack: Vec<StackFrame>,
}

#[derive(Deserialize)]
struct NamespacesLine {
    #[serde(default)]
    net: u64,
    #[serde(default)]
    uts: u64,
    #[serde(default)]
    ipc: u64,
    #[serde(default)]
    pid: u64,
    #[serde(default)]
    user: u64,
    #[serde(default)]
    mnt: u64,
    #[serde(default)]
    cgroup: u64,
}

/// `None` for a kind this version does not know.
fn parse_line(bytes: &[u8], line: u64, complete: bool) -> Result<Option<Record>, ReadError> {
    let parsed: AnyLine = serde_json::from_slice(bytes).map_err(|e| syntax_error(&e, line, complete))?;
    let missing = |kind: &'static str, field: &'static str| ReadError::Missing { line, kind, field };
    let record = match parsed.kind.as_deref().unwrap_or("event") {
        "event" => {
            let k = "event";
            Record::Event(EventRecord {
                time_ns: parsed.time_ns.ok_or_else(|| missing(k, "time_ns"))?,
                cpu: parsed.cpu.ok_or_else(|| missing(k, "cpu"))?,
                pid: parsed.pid.ok_or_else(|| missing(k, "pid"))?,
                tid: parsed.tid.ok_or_else(|| missing(k, "tid"))?,
                comm: parsed.comm.ok_or_else(|| missing(k, "comm"))?,
                process: parsed.process.ok_or_else(|| missing(k, "process"))?,
                namespaces: parsed.namespaces.map(|n| Namespaces {
                    net: n.net,
                    uts: n.uts,
                    ipc: n.ipc,
                    pid: n.pid,
                    user: n.user,
                    mnt: n.mnt,
                    cgroup: n.cgroup,
                }),
                event: parsed.event.ok_or_else(|| missing(k, "event"))?,
                tracepoint: parsed.tracepoint,
                fields: parsed.fields.ok_or_else(|| missing(k, "fields"))?.0,
                error: parsed.error,
                stack: parsed.stack,
            })
        }
        "process" => Record::Process(ProcessRecord {
            time_ns: parsed.time_ns.ok_or_else(|| missing("process", "time_ns"))?,
            pid: parsed.pid.ok_or_else(|| missing("process", "pid"))?,
            executable: parsed.executable,
            command_line: parsed.command_line,
            container_id: parsed.container_id,
            resource: parsed.resource,
            pod_uid: parsed.pod_uid,
            pid_in_container: parsed.pid_in_container,
        }),
        "exit" => Record::Exit(ExitRecord {
            time_ns: parsed.time_ns.ok_or_else(|| missing("exit", "time_ns"))?,
            pid: parsed.pid.ok_or_else(|| missing("exit", "pid"))?,
            tid: parsed.tid.ok_or_else(|| missing("exit", "tid"))?,
        }),
        "lost" => Record::Lost(LostRecord {
            time_ns: parsed.time_ns.ok_or_else(|| missing("lost", "time_ns"))?,
            cpu: parsed.cpu.ok_or_else(|| missing("lost", "cpu"))?,
            count: parsed.count.ok_or_else(|| missing("lost", "count"))?,
            sideband: parsed.sideband.unwrap_or(false),
        }),
        "clock" => Record::Clock(ClockRecord {
            time_ns: parsed.time_ns.ok_or_else(|| missing("clock", "time_ns"))?,
            unix_ns: parsed.unix_ns.ok_or_else(|| missing("clock", "unix_ns"))?,
        }),
        _ => return Ok(None),
    };
    Ok(Some(record))
}

fn syntax_error(e: &serde_json::Error, line: u64, complete: bool) -> ReadError {
    // serde_json says "MESSAGE at line 1 column N"; each line is parsed on
    // its own, so only the message and column are worth keeping.
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    };
    ReadError::Syntax { line, column: e.column(), message, truncated: !complete }
}

/// An event's fields, in the order the line gives them (which is their
/// declaration order, and the span convention depends on it).
struct FieldList(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for FieldList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Fields)
    }
}

/// Reads an object of named values: an event's `fields`, or a struct's
/// members.
struct Fields;

impl<'de> Visitor<'de> for Fields {
    type Value = FieldList;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of field values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FieldList, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(4).min(1024));
        while let Some(name) = map.next_key::<String>()? {
            let FieldValue(value) = map.next_value()?;
            fields.push((name, value));
        }
        Ok(FieldList(fields))
    }
}

struct FieldValue(Value);

impl<'de> Deserialize<'de> for FieldValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct One;
        impl<'de> Visitor<'de> for One {
            type Value = FieldValue;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field value: a number, true, false, a string, an array or an object")
            }

            // An array or a struct (an EventHeader event's); serde_json
            // refuses nesting deeper than 128, so a hostile line cannot
            // recurse without bound.
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FieldValue, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4).min(1024));
                while let Some(FieldValue(item)) = seq.next_element()? {
                    items.push(item);
                }
                Ok(FieldValue(Value::Array(items)))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FieldValue, A::Error> {
                let FieldList(members) = Fields.visit_map(map)?;
                Ok(FieldValue(Value::Struct(members)))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<FieldValue, E> {
                Ok(FieldValue(Value::Unsigned(v)))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<FieldValue, E> {
                // serde_json gives non-negative integers as u64; keep it so.
                Ok(FieldValue(if v >= 0 { Value::Unsigned(v as u64) } else { Value::Signed(v) }))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<FieldValue, E> {
                Ok(FieldValue(Value::F64(v)))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<FieldValue, E> {
                Ok(FieldValue(Value::Bool(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<FieldValue, E> {
                Ok(FieldValue(Value::Str(v.to_owned())))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<FieldValue, E> {
                Ok(FieldValue(Value::Str(v)))
            }
        }
        deserializer.deserialize_any(One)
    }
}

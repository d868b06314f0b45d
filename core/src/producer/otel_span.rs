//! OpenTelemetry spans and log records: the one place that defines how a
//! span finished by an OpenTelemetry SDK, or a log record it emitted,
//! travels as usertrace events.
//!
//! An SDK's exporter (Python's `usertrace.opentelemetry`, and later Java's
//! and Rust's) writes one event per finished span. Its first fields are
//! readable ids and times, so that `perf script`, ftrace and the timelines
//! show the span as any completed span (see [`span`](super::span)); its
//! last field is the span itself as an OTLP protobuf `Span` message, so
//! that the recorder sends on exactly what the SDK would have sent:
//! attributes, events, links, status, kind, tracestate, flags, and the
//! SDK's own Unix times.
//!
//! | event | fields |
//! |-------|--------|
//! | `<provider>_otel_span` | `u64 span_start_ns`, `u64 span_duration_ns` (CLOCK_MONOTONIC, the completed-span convention), `u64 trace_id_hi`, `u64 trace_id_lo`, `u64 span_id`, `u64 parent_span_id` (0: a root), `name`, `scope_name`, `scope_version` (strings: the instrumentation scope, so the recorder rebuilds `ScopeSpans`), `u32 status_code` (OTLP's `Status.StatusCode`: 0 unset, 1 ok, 2 error; readable so that a trigger can fire on a failed span), `u32 otlp_parts`, `otlp_span` (bytes: part 0 of the protobuf) |
//! | `<provider>_otel_span_part` | `u64 otlp_span_part` (the span's id), `u32 otlp_part` (1 …), `u32 otlp_parts`, `otlp_span` (bytes: that part) |
//! | `<provider>_otel_log` | `u64 trace_id_hi`, `u64 trace_id_lo`, `u64 span_id` (0: in no span), `u32 severity_number`, `body` (string), `scope_name`, `scope_version`, `u64 log_id` (random: the key of its parts), `u32 otlp_parts`, `otlp_log` (bytes: part 0 of the OTLP `LogRecord`) |
//! | `<provider>_otel_log_part` | `u64 otlp_log_part` (the log's `log_id`), `u32 otlp_part`, `u32 otlp_parts`, `otlp_log` (bytes: that part) |
//!
//! A log record travels like a span: one event, readable fields first
//! (the log's own time is in its protobuf; the event's time is when it
//! was exported), cut into parts by the same rule.
//!
//! # Too large for one event
//!
//! perf takes at most 8 KiB per sample. A protobuf that does not fit in
//! the head event is cut into parts of at most [`PART_LEN`] bytes, in
//! order: part 0 rides in the head, parts 1 … n−1 in `otel_span_part`
//! events, which are written *before* the head. A reader that sees events
//! in time order therefore holds every part that will ever come when the
//! head arrives: it joins them ([`Assembly`]) and exports the span, or,
//! with a part missing (lost, or a lying count), exports the span from its
//! readable fields marked with what was lost. A span is never dropped
//! silently. The readable strings are cut to [`MAX_LABEL_LEN`] bytes; the
//! protobuf keeps them whole.

#[cfg(test)]
mod tests;

use super::field::{Field, FieldType};
use super::provider::Provider;
use super::value::Value;
use super::DynamicTracepoint;
use crate::Error;

/// The head event (after `<provider>_`): one per finished span.
pub const OTEL_SPAN_EVENT: &str = "otel_span";
/// The event that carries the parts after the first.
pub const OTEL_SPAN_PART_EVENT: &str = "otel_span_part";
/// The head's field with the span's id.
pub const SPAN_ID_FIELD: &str = "span_id";
/// The head's fields with the instrumentation scope.
pub const SCOPE_NAME_FIELD: &str = "scope_name";
/// See [`SCOPE_NAME_FIELD`].
pub const SCOPE_VERSION_FIELD: &str = "scope_version";
/// The head's field with the span's status (OTLP's `Status.StatusCode`).
pub const STATUS_CODE_FIELD: &str = "status_code";
/// OTLP's `StatusCode` of a span that failed: what a flight recorder's
/// trigger `<provider>_otel_span:status_code==2` waits for.
pub const STATUS_CODE_ERROR: u32 = 2;
/// How many parts the protobuf was cut into (1: it is whole in the head).
pub const OTLP_PARTS_FIELD: &str = "otlp_parts";
/// The protobuf bytes of the part an event carries.
pub const OTLP_SPAN_FIELD: &str = "otlp_span";
/// The first field of a part event: the id of the span it belongs to.
pub const OTLP_SPAN_PART_FIELD: &str = "otlp_span_part";
/// A part event's index (1 … `otlp_parts` − 1).
pub const OTLP_PART_FIELD: &str = "otlp_part";

/// The log record event (after `<provider>_`): one per log record.
pub const OTEL_LOG_EVENT: &str = "otel_log";
/// The event that carries a log record's parts after the first.
pub const OTEL_LOG_PART_EVENT: &str = "otel_log_part";
/// The log head's field with the key of its parts.
pub const LOG_ID_FIELD: &str = "log_id";
/// The log head's field with its severity (OTLP's `SeverityNumber`).
pub const SEVERITY_NUMBER_FIELD: &str = "severity_number";
/// The protobuf bytes of the part a log event carries.
pub const OTLP_LOG_FIELD: &str = "otlp_log";
/// The first field of a log part event: the `log_id` of its record.
pub const OTLP_LOG_PART_FIELD: &str = "otlp_log_part";

/// The most protobuf bytes in one event, part or head: with the other
/// fields and perf's headers, every event stays under 7 KiB.
pub const PART_LEN: usize = 6 * 1024;
/// The most bytes of the head's readable strings (name, scope name and
/// version); the protobuf holds them whole.
pub const MAX_LABEL_LEN: usize = 256;
/// The most parts a span is cut into: a protobuf of 6 MiB. Beyond, the
/// emit fails with [`Error::PayloadTooLarge`] rather than flood the ring.
pub const MAX_PARTS: usize = 1024;

/// The fields of `<provider>_otel_span`, in order.
pub static OTEL_SPAN_FIELDS: [Field; 12] = [
    Field::new(super::span::SPAN_START_NS_FIELD, FieldType::U64),
    Field::new(super::span::SPAN_DURATION_NS_FIELD, FieldType::U64),
    Field::new(super::span::TRACE_ID_HI_FIELD, FieldType::U64),
    Field::new(super::span::TRACE_ID_LO_FIELD, FieldType::U64),
    Field::new(SPAN_ID_FIELD, FieldType::U64),
    Field::new(super::span::PARENT_SPAN_ID_FIELD, FieldType::U64),
    Field::new("name", FieldType::Str),
    Field::new(SCOPE_NAME_FIELD, FieldType::Str),
    Field::new(SCOPE_VERSION_FIELD, FieldType::Str),
    Field::new(STATUS_CODE_FIELD, FieldType::U32),
    Field::new(OTLP_PARTS_FIELD, FieldType::U32),
    Field::new(OTLP_SPAN_FIELD, FieldType::Bytes),
];

/// The fields of `<provider>_otel_span_part`, in order.
pub static OTEL_SPAN_PART_FIELDS: [Field; 4] = [
    Field::new(OTLP_SPAN_PART_FIELD, FieldType::U64),
    Field::new(OTLP_PART_FIELD, FieldType::U32),
    Field::new(OTLP_PARTS_FIELD, FieldType::U32),
    Field::new(OTLP_SPAN_FIELD, FieldType::Bytes),
];

/// The fields of `<provider>_otel_log`, in order.
pub static OTEL_LOG_FIELDS: [Field; 10] = [
    Field::new(super::span::TRACE_ID_HI_FIELD, FieldType::U64),
    Field::new(super::span::TRACE_ID_LO_FIELD, FieldType::U64),
    Field::new(SPAN_ID_FIELD, FieldType::U64),
    Field::new(SEVERITY_NUMBER_FIELD, FieldType::U32),
    Field::new("body", FieldType::Str),
    Field::new(SCOPE_NAME_FIELD, FieldType::Str),
    Field::new(SCOPE_VERSION_FIELD, FieldType::Str),
    Field::new(LOG_ID_FIELD, FieldType::U64),
    Field::new(OTLP_PARTS_FIELD, FieldType::U32),
    Field::new(OTLP_LOG_FIELD, FieldType::Bytes),
];

/// The fields of `<provider>_otel_log_part`, in order.
pub static OTEL_LOG_PART_FIELDS: [Field; 4] = [
    Field::new(OTLP_LOG_PART_FIELD, FieldType::U64),
    Field::new(OTLP_PART_FIELD, FieldType::U32),
    Field::new(OTLP_PARTS_FIELD, FieldType::U32),
    Field::new(OTLP_LOG_FIELD, FieldType::Bytes),
];

/// A log record an SDK emitted, as its exporter hands it over.
#[derive(Debug, Clone, Copy)]
pub struct OtelLog<'a> {
    /// The trace of the span it was emitted in; 0 for none.
    pub trace_id: u128,
    /// That span's id; 0 for none.
    pub span_id: u64,
    /// OTLP's `SeverityNumber` (0: unspecified).
    pub severity_number: u32,
    /// Its body as text (cut to [`MAX_LABEL_LEN`] in the readable field).
    pub body: &'a str,
    /// Its instrumentation scope's name.
    pub scope_name: &'a str,
    /// Its instrumentation scope's version ("" if none).
    pub scope_version: &'a str,
    /// The record as an OTLP protobuf `LogRecord` message.
    pub otlp: &'a [u8],
}

/// A span an SDK finished, as its exporter hands it over.
#[derive(Debug, Clone, Copy)]
pub struct OtelSpan<'a> {
    /// Its start, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// Its length in ns.
    pub duration_ns: u64,
    /// Its trace id (big-endian, as `traceparent` spells it).
    pub trace_id: u128,
    /// Its span id.
    pub span_id: u64,
    /// Its parent's span id; 0 for a root.
    pub parent_span_id: u64,
    /// Its name.
    pub name: &'a str,
    /// Its instrumentation scope's name.
    pub scope_name: &'a str,
    /// Its instrumentation scope's version ("" if none).
    pub scope_version: &'a str,
    /// Its status, OTLP's `Status.StatusCode` (0 unset, 1 ok, 2 error):
    /// the same as in `otlp`, readable for triggers and filters.
    pub status_code: u32,
    /// The span as an OTLP protobuf `Span` message.
    pub otlp: &'a [u8],
}

/// The two tracepoints of a provider's OpenTelemetry spans.
#[derive(Debug)]
pub struct OtelSpanTracepoints {
    head: DynamicTracepoint,
    part: DynamicTracepoint,
}

impl OtelSpanTracepoints {
    /// Declares and registers `<provider>_otel_span` and
    /// `<provider>_otel_span_part`.
    pub fn new(provider: &Provider) -> Result<OtelSpanTracepoints, Error> {
        let head = provider.tracepoint(OTEL_SPAN_EVENT, OTEL_SPAN_FIELDS.to_vec())?;
        let part = provider.tracepoint(OTEL_SPAN_PART_EVENT, OTEL_SPAN_PART_FIELDS.to_vec())?;
        Ok(OtelSpanTracepoints { head, part })
    }

    /// Whether a recorder listens to the spans: one load. An exporter
    /// checks it once per batch; a sampler once per span.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.head.enabled()
    }

    /// Writes `span`, cut into parts if need be (parts first, head last);
    /// returns how many events were written (0 while nobody listens).
    ///
    /// Fails with [`Error::PayloadTooLarge`], writing nothing, for a
    /// protobuf of more than [`MAX_PARTS`] parts.
    pub fn emit(&self, span: &OtelSpan<'_>) -> Result<usize, Error> {
        if !self.enabled() {
            return Ok(0);
        }
        let chunks = split(span.otlp).map_err(|too_large| Error::PayloadTooLarge {
            event: self.head.name().to_owned(),
            len: too_large.len,
            max: too_large.max,
        })?;
        let parts = chunks.len() as u32;
        for (index, chunk) in chunks.iter().enumerate().skip(1) {
            self.part.emit(&[
                Value::U64(span.span_id),
                Value::U32(index as u32),
                Value::U32(parts),
                Value::Bytes(chunk),
            ])?;
        }
        self.head.emit(&[
            Value::U64(span.start_ns),
            Value::U64(span.duration_ns),
            Value::U64((span.trace_id >> 64) as u64),
            Value::U64(span.trace_id as u64),
            Value::U64(span.span_id),
            Value::U64(span.parent_span_id),
            Value::Str(label(span.name)),
            Value::Str(label(span.scope_name)),
            Value::Str(label(span.scope_version)),
            Value::U32(span.status_code),
            Value::U32(parts),
            Value::Bytes(chunks[0]),
        ])?;
        Ok(chunks.len())
    }
}

/// The two tracepoints of a provider's OpenTelemetry log records.
#[derive(Debug)]
pub struct OtelLogTracepoints {
    head: DynamicTracepoint,
    part: DynamicTracepoint,
}

impl OtelLogTracepoints {
    /// Declares and registers `<provider>_otel_log` and
    /// `<provider>_otel_log_part`.
    pub fn new(provider: &Provider) -> Result<OtelLogTracepoints, Error> {
        let head = provider.tracepoint(OTEL_LOG_EVENT, OTEL_LOG_FIELDS.to_vec())?;
        let part = provider.tracepoint(OTEL_LOG_PART_EVENT, OTEL_LOG_PART_FIELDS.to_vec())?;
        Ok(OtelLogTracepoints { head, part })
    }

    /// Whether a recorder listens to the log records: one load.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.head.enabled()
    }

    /// Writes `log`, cut into parts if need be (parts first, head last);
    /// returns how many events were written (0 while nobody listens).
    pub fn emit(&self, log: &OtelLog<'_>) -> Result<usize, Error> {
        if !self.enabled() {
            return Ok(0);
        }
        let log_id = crate::trace_context::new_span_id();
        let chunks = emit_parts(&self.head, &self.part, log_id, log.otlp)?;
        self.head.emit(&[
            Value::U64((log.trace_id >> 64) as u64),
            Value::U64(log.trace_id as u64),
            Value::U64(log.span_id),
            Value::U32(log.severity_number),
            Value::Str(label(log.body)),
            Value::Str(label(log.scope_name)),
            Value::Str(label(log.scope_version)),
            Value::U64(log_id),
            Value::U32(chunks.len() as u32),
            Value::Bytes(chunks[0]),
        ])?;
        Ok(chunks.len())
    }
}

/// Cuts `otlp` into parts and writes those after the first on `part`,
/// keyed by `key`; returns every part, the first for the head.
fn emit_parts<'a>(head: &DynamicTracepoint, part: &DynamicTracepoint, key: u64, otlp: &'a [u8]) -> Result<Vec<&'a [u8]>, Error> {
    let chunks = split(otlp).map_err(|too_large| Error::PayloadTooLarge {
        event: head.name().to_owned(),
        len: too_large.len,
        max: too_large.max,
    })?;
    let parts = chunks.len() as u32;
    for (index, chunk) in chunks.iter().enumerate().skip(1) {
        part.emit(&[Value::U64(key), Value::U32(index as u32), Value::U32(parts), Value::Bytes(chunk)])?;
    }
    Ok(chunks)
}

/// The CLOCK_MONOTONIC time (every usertrace event's clock) of the Unix
/// time `unix_ns` (an SDK's span times), by the two clocks' offset now; 0
/// for a time before the machine booted.
pub fn monotonic_from_unix_ns(unix_ns: u64) -> u64 {
    let now_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
    let offset = i128::from(crate::sys::monotonic_ns()) - now_unix;
    u64::try_from(i128::from(unix_ns) + offset).unwrap_or(0)
}

/// `s` cut to [`MAX_LABEL_LEN`] bytes at a character boundary.
fn label(s: &str) -> &str {
    if s.len() <= MAX_LABEL_LEN {
        return s;
    }
    let mut end = MAX_LABEL_LEN;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A protobuf of more than [`MAX_PARTS`] parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    /// Its length.
    pub len: usize,
    /// The most a span may have: [`PART_LEN`] × [`MAX_PARTS`].
    pub max: usize,
}

/// `otlp` cut into the parts the events carry, in order: at least one (an
/// empty protobuf is one empty part), each at most [`PART_LEN`] bytes.
pub fn split(otlp: &[u8]) -> Result<Vec<&[u8]>, TooLarge> {
    if otlp.len() > PART_LEN * MAX_PARTS {
        return Err(TooLarge {
            len: otlp.len(),
            max: PART_LEN * MAX_PARTS,
        });
    }
    if otlp.is_empty() {
        return Ok(vec![otlp]);
    }
    Ok(otlp.chunks(PART_LEN).collect())
}

/// Why the parts of a span could not be joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incomplete {
    /// Parts never arrived (lost, or written by a process that died).
    Missing {
        /// How many of them.
        missing: u32,
        /// Of how many, as the head says.
        parts: u32,
    },
    /// The head or a part gave a count of 0, more than [`MAX_PARTS`], or
    /// one that disagrees with the head's: the events do not follow this
    /// rule.
    BadCount {
        /// The count the head gave.
        parts: u32,
    },
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Incomplete::Missing { missing, parts } => {
                write!(f, "{missing} of {parts} parts of the OTLP span were lost")
            }
            Incomplete::BadCount { parts } => {
                write!(f, "the OTLP span's parts do not agree on their count (the head says {parts}): not written by this rule")
            }
        }
    }
}

impl std::error::Error for Incomplete {}

/// The parts of one span, gathered as they arrive, joined once its head
/// comes: the reader's half of [`split`].
#[derive(Debug, Clone, Default)]
pub struct Assembly {
    parts: Vec<Option<Vec<u8>>>,
    /// A part gave a count unlike another's, or an index past its count.
    inconsistent: bool,
    bytes: usize,
}

impl Assembly {
    /// Keeps part `index` of `parts` (from a part event).
    pub fn add(&mut self, index: u32, parts: u32, bytes: &[u8]) {
        let count = parts as usize;
        if index == 0
            || index >= parts
            || count > MAX_PARTS
            || (!self.parts.is_empty() && self.parts.len() != count)
        {
            self.inconsistent = true;
            return;
        }
        if self.parts.is_empty() {
            self.parts.resize(count, None);
        }
        let slot = &mut self.parts[index as usize];
        if slot.is_none() {
            self.bytes += bytes.len();
            *slot = Some(bytes.to_vec());
        }
    }

    /// The bytes it holds.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many distinct parts it holds.
    pub fn parts(&self) -> usize {
        self.parts.iter().filter(|p| p.is_some()).count()
    }

    /// The whole protobuf, given the head's part count and its part 0.
    pub fn join(self, parts: u32, head: &[u8]) -> Result<Vec<u8>, Incomplete> {
        let count = parts as usize;
        if count == 0
            || count > MAX_PARTS
            || self.inconsistent
            || (!self.parts.is_empty() && self.parts.len() != count)
        {
            return Err(Incomplete::BadCount { parts });
        }
        let missing = (1..count)
            .filter(|&i| self.parts.get(i).is_none_or(Option::is_none))
            .count() as u32;
        if missing > 0 {
            return Err(Incomplete::Missing { missing, parts });
        }
        let mut whole = Vec::with_capacity(head.len() + self.bytes);
        whole.extend_from_slice(head);
        for part in self.parts.into_iter().flatten() {
            whole.extend_from_slice(&part);
        }
        Ok(whole)
    }
}

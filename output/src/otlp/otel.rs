//! Spans an OpenTelemetry SDK finished, and log records it emitted,
//! carried whole (the core's [`usertrace::otel_span`] rule), sent on
//! exactly as the SDK made them.
//!
//! Two steps, both here:
//! - [`Reassembler`] joins a span's (or log record's) parts into its head
//!   event, before the
//!   records reach the timeline, so that a head is one completed span
//!   with its whole protobuf, and the part events are gone. Its table of
//!   open assemblies is bounded ([`MAX_OPEN`], [`MAX_OPEN_BYTES`]): beyond
//!   either it drops the oldest and counts them, and the head that comes
//!   for one of them is then exported marked.
//! - [`carried_span`] decodes a head's protobuf into the OTLP `Span` the
//!   SDK would have sent, with its instrumentation scope; [`carried_log`]
//!   likewise a `LogRecord`. A head whose
//!   parts were lost, or whose protobuf does not decode, is exported from
//!   its readable fields, with an attribute that names what went wrong:
//!   never dropped.

use std::borrow::Cow;
use std::collections::VecDeque;

use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::trace::v1::{Span, Status};
use prost::Message;
use rustc_hash::FxHashMap;
use usertrace::otel_span::{
    Assembly, LOG_ID_FIELD, OTEL_LOG_FIELDS, OTEL_SPAN_FIELDS, OTLP_LOG_FIELD, OTLP_LOG_PART_FIELD, OTLP_PARTS_FIELD, OTLP_SPAN_FIELD,
    OTLP_SPAN_PART_FIELD, SCOPE_NAME_FIELD, SCOPE_VERSION_FIELD, SEVERITY_NUMBER_FIELD, SPAN_ID_FIELD, STATUS_CODE_FIELD,
};
use usertrace::span::{PARENT_SPAN_ID_FIELD, TRACE_ID_HI_FIELD, TRACE_ID_LO_FIELD};

use super::mapping::Clock;
use crate::record::{EventRecord, Record, Value};
use crate::timeline;

/// The most spans whose parts are held waiting for their head.
pub const MAX_OPEN: usize = 4096;
/// The most bytes of parts held waiting for their heads.
pub const MAX_OPEN_BYTES: usize = 64 << 20;
/// The field the reassembler adds to a head whose parts did not all
/// come: why (the core's [`usertrace::otel_span::Incomplete`]).
pub const INCOMPLETE_FIELD: &str = "otlp_span_incomplete";
/// The field the reassembler adds to every head it joined parts into: how
/// many events the span was made of (the head and its parts), so that
/// every event is accounted for.
pub const EVENTS_FIELD: &str = "otlp_events";
/// The attribute of a span exported from its readable fields because its
/// protobuf was incomplete or did not decode: what went wrong.
pub const LOSS_ATTRIBUTE: &str = "usertrace.otel.loss";

/// What an event carries whole: a span or a log record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Carried {
    Span,
    Log,
}

impl Carried {
    /// The field that holds the protobuf (or a part of it).
    fn bytes_field(self) -> &'static str {
        match self {
            Carried::Span => OTLP_SPAN_FIELD,
            Carried::Log => OTLP_LOG_FIELD,
        }
    }
}

/// Whose parts: (pid, what, span id or log id).
type Key = (u32, Carried, u64);

/// Joins the parts of the spans and log records of a recording that
/// arrives in batches.
#[derive(Debug, Default)]
pub struct Reassembler {
    open: FxHashMap<Key, Assembly>,
    /// The keys in the order they opened, for eviction; a key whose head
    /// came is skipped when it reaches the front.
    order: VecDeque<Key>,
    bytes: usize,
    evicted: u64,
}

impl Reassembler {
    /// `batch` without its part events, each head holding its whole
    /// protobuf (or, with parts missing, its first part and
    /// [`INCOMPLETE_FIELD`]). Borrowed when the batch has no OpenTelemetry
    /// span.
    pub fn take<'a>(&mut self, batch: &'a [Record]) -> Cow<'a, [Record]> {
        let carries = |r: &Record| matches!(r, Record::Event(e) if part_of(e).is_some() || head_of(e).is_some());
        if !batch.iter().any(carries) {
            return Cow::Borrowed(batch);
        }
        let mut out = Vec::with_capacity(batch.len());
        for r in batch {
            if let Record::Event(e) = r {
                if let Some(what) = part_of(e) {
                    self.add_part(e, what);
                    continue;
                }
                if let Some((what, id)) = head_of(e) {
                    out.push(Record::Event(self.join(e, (e.pid, what, id))));
                    continue;
                }
            }
            out.push(r.clone());
        }
        Cow::Owned(out)
    }

    /// How many spans' parts were dropped to keep within the bounds.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// How many spans have parts waiting for their head.
    pub fn open(&self) -> usize {
        self.open.len()
    }

    fn add_part(&mut self, e: &EventRecord, what: Carried) {
        let [(_, id), (_, index), (_, parts), (_, Value::Bytes(bytes))] = e.fields.as_slice() else { return };
        let (Some(id), Some(index), Some(parts)) = (id.as_u64(), index.as_u64(), parts.as_u64()) else { return };
        let key = (e.pid, what, id);
        let assembly = self.open.entry(key).or_insert_with(|| {
            self.order.push_back(key);
            Assembly::default()
        });
        let before = assembly.bytes();
        assembly.add(u32::try_from(index).unwrap_or(u32::MAX), u32::try_from(parts).unwrap_or(u32::MAX), bytes);
        self.bytes += assembly.bytes() - before;
        self.evict();
    }

    fn evict(&mut self) {
        while self.open.len() > MAX_OPEN || self.bytes > MAX_OPEN_BYTES {
            let Some(key) = self.order.pop_front() else { return };
            if let Some(a) = self.open.remove(&key) {
                self.bytes -= a.bytes();
                self.evicted += 1;
            }
        }
    }

    fn join(&mut self, head: &EventRecord, key: Key) -> EventRecord {
        let assembly = self.open.remove(&key).unwrap_or_default();
        self.bytes -= assembly.bytes();
        // Keys whose heads came are dropped from the front as they reach it.
        while self.order.front().is_some_and(|k| !self.open.contains_key(k)) {
            self.order.pop_front();
        }
        let mut e = head.clone();
        e.fields.push((EVENTS_FIELD.into(), Value::Unsigned(1 + assembly.parts() as u64)));
        let parts = field(&e, OTLP_PARTS_FIELD).and_then(Value::as_u64).map_or(0, |p| u32::try_from(p).unwrap_or(u32::MAX));
        let bytes_field = key.1.bytes_field();
        let Some(Value::Bytes(first)) = field(&e, bytes_field) else { return e };
        match assembly.join(parts, first) {
            Ok(whole) => set_field(&mut e, bytes_field, Value::Bytes(whole)),
            Err(incomplete) => e.fields.push((INCOMPLETE_FIELD.into(), Value::Str(incomplete.to_string()))),
        }
        e
    }
}

/// What a part event (`otel_span_part`, `otel_log_part`) is a part of.
fn part_of(e: &EventRecord) -> Option<Carried> {
    match e.fields.first().map(|(n, _)| n.as_str()) {
        _ if e.fields.len() != 4 => None,
        Some(OTLP_SPAN_PART_FIELD) => Some(Carried::Span),
        Some(OTLP_LOG_PART_FIELD) => Some(Carried::Log),
        _ => None,
    }
}

/// Where a head's key and protobuf fields sit: taken once from the core's
/// field lists (so a field added there moves them here too), not looked up
/// again for every event an export reads.
struct HeadPositions {
    span_id: Option<usize>,
    span_otlp: Option<usize>,
    log_id: Option<usize>,
    log_otlp: Option<usize>,
}

static HEAD_POSITIONS: std::sync::LazyLock<HeadPositions> = std::sync::LazyLock::new(|| HeadPositions {
    span_id: position(&OTEL_SPAN_FIELDS, SPAN_ID_FIELD),
    span_otlp: position(&OTEL_SPAN_FIELDS, OTLP_SPAN_FIELD),
    log_id: position(&OTEL_LOG_FIELDS, LOG_ID_FIELD),
    log_otlp: position(&OTEL_LOG_FIELDS, OTLP_LOG_FIELD),
});

/// What a head event (`otel_span`, `otel_log`) carries, and its key.
fn head_of(e: &EventRecord) -> Option<(Carried, u64)> {
    let fields = e.fields.as_slice();
    let named = |i: Option<usize>, name: &str| i.and_then(|i| fields.get(i)).is_some_and(|(n, _)| n == name);
    let key = |i: Option<usize>| i.and_then(|i| fields.get(i)).and_then(|(_, v)| v.as_u64());
    let at = &*HEAD_POSITIONS;
    if named(at.span_id, SPAN_ID_FIELD) && named(at.span_otlp, OTLP_SPAN_FIELD) {
        return Some((Carried::Span, key(at.span_id)?));
    }
    if named(at.log_id, LOG_ID_FIELD) && named(at.log_otlp, OTLP_LOG_FIELD) {
        return Some((Carried::Log, key(at.log_id)?));
    }
    None
}

/// Where `name` is in a head's `fields`.
fn position(fields: &[usertrace::Field], name: &str) -> Option<usize> {
    fields.iter().position(|f| f.name == name)
}

fn field<'a>(e: &'a EventRecord, name: &str) -> Option<&'a Value> {
    e.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn set_field(e: &mut EventRecord, name: &str, value: Value) {
    if let Some((_, v)) = e.fields.iter_mut().find(|(n, _)| n == name) {
        *v = value;
    }
}

/// How many events a carried span or log record was made of (its args
/// or fields): its head and the parts joined into it.
pub fn carried_events(args: &[(String, Value)]) -> u64 {
    args.iter().find(|(n, _)| n == EVENTS_FIELD).and_then(|(_, v)| v.as_u64()).unwrap_or(1)
}

/// Why a carried span or log record is exported from its readable fields.
#[derive(Debug, Clone, PartialEq)]
pub enum CarriedSpanError {
    /// Parts of its protobuf never arrived: the reassembler's message.
    Incomplete(String),
    /// Its protobuf is not an OTLP message of its kind (`Span`, `LogRecord`).
    Undecodable {
        /// The field that holds it.
        field: &'static str,
        /// What the decoder said.
        error: prost::DecodeError,
    },
}

impl std::fmt::Display for CarriedSpanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CarriedSpanError::Incomplete(why) => write!(f, "{why}; exported from the event's ids, name and times (raise the recorder's buffer if events are being lost)"),
            CarriedSpanError::Undecodable { field, error } => write!(
                f,
                "the {field} field is not an OTLP protobuf of its kind ({error}); exported from the event's readable fields: check the exporter that wrote it follows usertrace::otel_span"
            ),
        }
    }
}

impl std::error::Error for CarriedSpanError {}

/// The OTLP span a timeline span carries whole, with its scope; `None`
/// for a span that carries none.
pub fn carried_span(s: &timeline::Span, clock: Clock) -> Option<(Span, InstrumentationScope)> {
    let arg = |name: &str| s.args.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let Some(Value::Bytes(otlp)) = arg(OTLP_SPAN_FIELD) else { return None };
    let string = |name: &str| arg(name).map(|v| v.to_string()).unwrap_or_default();
    let scope = InstrumentationScope { name: string(SCOPE_NAME_FIELD), version: string(SCOPE_VERSION_FIELD), ..Default::default() };
    let decoded = match arg(INCOMPLETE_FIELD) {
        Some(why) => Err(CarriedSpanError::Incomplete(why.to_string())),
        None => Span::decode(otlp.as_slice()).map_err(|error| CarriedSpanError::Undecodable { field: OTLP_SPAN_FIELD, error }),
    };
    let span = decoded.unwrap_or_else(|error| readable_span(s, clock, &error));
    Some((span, scope))
}

/// The OTLP log record an instant carries whole, with its scope; `None`
/// for an instant that carries none.
pub fn carried_log(i: &timeline::Instant, clock: Clock) -> Option<(LogRecord, InstrumentationScope)> {
    let arg = |name: &str| i.args.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let Some(Value::Bytes(otlp)) = arg(OTLP_LOG_FIELD) else { return None };
    arg(LOG_ID_FIELD)?;
    let string = |name: &str| arg(name).map(|v| v.to_string()).unwrap_or_default();
    let scope = InstrumentationScope { name: string(SCOPE_NAME_FIELD), version: string(SCOPE_VERSION_FIELD), ..Default::default() };
    let decoded = match arg(INCOMPLETE_FIELD) {
        Some(why) => Err(CarriedSpanError::Incomplete(why.to_string())),
        None => LogRecord::decode(otlp.as_slice()).map_err(|error| CarriedSpanError::Undecodable { field: OTLP_LOG_FIELD, error }),
    };
    let log = decoded.unwrap_or_else(|error| readable_log(i, clock, &error));
    Some((log, scope))
}

/// A log record from a head's readable fields, marked with what was lost.
fn readable_log(i: &timeline::Instant, clock: Clock, error: &CarriedSpanError) -> LogRecord {
    let u64_arg = |name: &str| i.args.iter().find(|(n, _)| n == name).and_then(|(_, v)| v.as_u64()).unwrap_or(0);
    let trace_id = u128::from(u64_arg(TRACE_ID_HI_FIELD)) << 64 | u128::from(u64_arg(TRACE_ID_LO_FIELD));
    let span_id = u64_arg(SPAN_ID_FIELD);
    let body = i.args.iter().find(|(n, _)| n == "body").map(|(_, v)| v.to_string()).unwrap_or_default();
    let text = |s: String| Some(AnyValue { value: Some(any_value::Value::StringValue(s)) });
    LogRecord {
        time_unix_nano: clock.unix_ns(i.time_ns),
        observed_time_unix_nano: clock.unix_ns(i.time_ns),
        severity_number: i32::try_from(u64_arg(SEVERITY_NUMBER_FIELD)).unwrap_or(0),
        body: text(body),
        trace_id: if trace_id == 0 { Vec::new() } else { trace_id.to_be_bytes().to_vec() },
        span_id: if span_id == 0 { Vec::new() } else { span_id.to_be_bytes().to_vec() },
        attributes: vec![KeyValue { key: LOSS_ATTRIBUTE.into(), value: text(error.to_string()), ..Default::default() }],
        ..Default::default()
    }
}

/// A span from a head's readable fields, marked with what was lost.
fn readable_span(s: &timeline::Span, clock: Clock, error: &CarriedSpanError) -> Span {
    let u64_arg = |name: &str| s.args.iter().find(|(n, _)| n == name).and_then(|(_, v)| v.as_u64()).unwrap_or(0);
    let trace_id = u128::from(u64_arg(TRACE_ID_HI_FIELD)) << 64 | u128::from(u64_arg(TRACE_ID_LO_FIELD));
    let parent = u64_arg(PARENT_SPAN_ID_FIELD);
    let name = s.args.iter().find(|(n, _)| n == "name").map_or_else(|| s.name.clone(), |(_, v)| v.to_string());
    let loss = AnyValue { value: Some(any_value::Value::StringValue(error.to_string())) };
    Span {
        trace_id: trace_id.to_be_bytes().to_vec(),
        span_id: u64_arg(SPAN_ID_FIELD).to_be_bytes().to_vec(),
        parent_span_id: if parent == 0 { Vec::new() } else { parent.to_be_bytes().to_vec() },
        name,
        start_time_unix_nano: clock.unix_ns(s.start_ns),
        end_time_unix_nano: clock.unix_ns(s.end_ns),
        attributes: vec![KeyValue { key: LOSS_ATTRIBUTE.into(), value: Some(loss), ..Default::default() }],
        status: readable_status(u64_arg(STATUS_CODE_FIELD)),
        ..Default::default()
    }
}

/// The status of a span exported from its readable fields: its code only
/// (the message is in the lost protobuf); none for unset, as the SDK sends.
fn readable_status(code: u64) -> Option<Status> {
    let code = i32::try_from(code).ok().filter(|&c| c != 0)?;
    Some(Status { code, ..Default::default() })
}

#[cfg(test)]
#[path = "otel_tests.rs"]
mod tests;

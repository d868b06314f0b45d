//! Spans an OpenTelemetry SDK finished, carried whole (the core's
//! [`usertrace::otel_span`] rule), sent on exactly as the SDK made them.
//!
//! Two steps, both here:
//! - [`Reassembler`] joins a span's parts into its head event, before the
//!   records reach the timeline, so that a head is one completed span
//!   with its whole protobuf, and the part events are gone. Its table of
//!   open assemblies is bounded ([`MAX_OPEN`], [`MAX_OPEN_BYTES`]): beyond
//!   either it drops the oldest and counts them, and the head that comes
//!   for one of them is then exported marked.
//! - [`carried_span`] decodes a head's protobuf into the OTLP `Span` the
//!   SDK would have sent, with its instrumentation scope. A head whose
//!   parts were lost, or whose protobuf does not decode, is exported from
//!   its readable fields, with an attribute that names what went wrong:
//!   never dropped.

use std::borrow::Cow;
use std::collections::VecDeque;

use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use rustc_hash::FxHashMap;
use usertrace::otel_span::{Assembly, OTLP_PARTS_FIELD, OTLP_SPAN_FIELD, OTLP_SPAN_PART_FIELD, SCOPE_NAME_FIELD, SCOPE_VERSION_FIELD, SPAN_ID_FIELD};
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
/// The attribute of a span exported from its readable fields because its
/// protobuf was incomplete or did not decode: what went wrong.
pub const LOSS_ATTRIBUTE: &str = "usertrace.otel.loss";

/// Joins the parts of the spans of a recording that arrives in batches.
#[derive(Debug, Default)]
pub struct Reassembler {
    open: FxHashMap<(u32, u64), Assembly>,
    /// The keys in the order they opened, for eviction; a key whose head
    /// came is skipped when it reaches the front.
    order: VecDeque<(u32, u64)>,
    bytes: usize,
    evicted: u64,
}

impl Reassembler {
    /// `batch` without its part events, each head holding its whole
    /// protobuf (or, with parts missing, its first part and
    /// [`INCOMPLETE_FIELD`]). Borrowed when the batch has no OpenTelemetry
    /// span.
    pub fn take<'a>(&mut self, batch: &'a [Record]) -> Cow<'a, [Record]> {
        if !batch.iter().any(|r| is_part(r) || head_span_id(r).is_some()) {
            return Cow::Borrowed(batch);
        }
        let mut out = Vec::with_capacity(batch.len());
        for r in batch {
            if let Record::Event(e) = r {
                if is_part(r) {
                    self.add_part(e);
                    continue;
                }
                if let Some(span_id) = head_span_id(r) {
                    out.push(Record::Event(self.join(e, span_id)));
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

    fn add_part(&mut self, e: &EventRecord) {
        let [(_, id), (_, index), (_, parts), (_, Value::Bytes(bytes))] = e.fields.as_slice() else { return };
        let (Some(id), Some(index), Some(parts)) = (id.as_u64(), index.as_u64(), parts.as_u64()) else { return };
        let key = (e.pid, id);
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

    fn join(&mut self, head: &EventRecord, span_id: u64) -> EventRecord {
        let assembly = self.open.remove(&(head.pid, span_id)).unwrap_or_default();
        self.bytes -= assembly.bytes();
        // Keys whose heads came are dropped from the front as they reach it.
        while self.order.front().is_some_and(|k| !self.open.contains_key(k)) {
            self.order.pop_front();
        }
        let mut e = head.clone();
        let parts = field(&e, OTLP_PARTS_FIELD).and_then(Value::as_u64).map_or(0, |p| u32::try_from(p).unwrap_or(u32::MAX));
        let Some(Value::Bytes(first)) = field(&e, OTLP_SPAN_FIELD) else { return e };
        match assembly.join(parts, first) {
            Ok(whole) => set_field(&mut e, OTLP_SPAN_FIELD, Value::Bytes(whole)),
            Err(incomplete) => e.fields.push((INCOMPLETE_FIELD.into(), Value::Str(incomplete.to_string()))),
        }
        e
    }
}

fn is_part(r: &Record) -> bool {
    matches!(r, Record::Event(e) if e.fields.first().is_some_and(|(n, _)| n == OTLP_SPAN_PART_FIELD) && e.fields.len() == 4)
}

/// The span id of an `otel_span` head event.
fn head_span_id(r: &Record) -> Option<u64> {
    let Record::Event(e) = r else { return None };
    let fields = e.fields.as_slice();
    let named = |i: usize, name: &str| fields.get(i).is_some_and(|(n, _)| n == name);
    (named(4, SPAN_ID_FIELD) && named(10, OTLP_SPAN_FIELD)).then(|| fields[4].1.as_u64()).flatten()
}

fn field<'a>(e: &'a EventRecord, name: &str) -> Option<&'a Value> {
    e.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn set_field(e: &mut EventRecord, name: &str, value: Value) {
    if let Some((_, v)) = e.fields.iter_mut().find(|(n, _)| n == name) {
        *v = value;
    }
}

/// Why a carried span is exported from its readable fields.
#[derive(Debug, Clone, PartialEq)]
pub enum CarriedSpanError {
    /// Parts of its protobuf never arrived: the reassembler's message.
    Incomplete(String),
    /// Its protobuf is not an OTLP `Span` message.
    Undecodable(prost::DecodeError),
}

impl std::fmt::Display for CarriedSpanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CarriedSpanError::Incomplete(why) => write!(f, "{why}; exported from the event's ids, name and times (raise the recorder's buffer if events are being lost)"),
            CarriedSpanError::Undecodable(e) => write!(
                f,
                "the otlp_span field is not an OTLP Span protobuf ({e}); exported from the event's ids, name and times: check the exporter that wrote it follows usertrace::otel_span"
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
        None => Span::decode(otlp.as_slice()).map_err(CarriedSpanError::Undecodable),
    };
    let span = decoded.unwrap_or_else(|error| readable_span(s, clock, &error));
    Some((span, scope))
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
        ..Default::default()
    }
}

#[cfg(test)]
#[path = "otel_tests.rs"]
mod tests;

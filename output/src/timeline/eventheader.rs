//! What the timeline reads from decoded EventHeader events (the consumer's
//! `eventheader.rs` decodes them): their names, and the spans that
//! OpenTelemetry's user_events trace exporter writes.
//!
//! - Many EventHeader events share one tracepoint (`MyProvider_L4K1`), so
//!   such an event is named `<provider>:<event>` from its `meta.provider`
//!   and `meta.event` fields, as Microsoft's own decoders name it.
//! - `opentelemetry-user-events-trace` writes one event per *finished* span,
//!   in Microsoft's Common Schema layout: an event named `Span` with
//!   `PartB._typeName` `Span`, the span's name in `PartB.name`, its start in
//!   `PartB.startTime` and its end in `PartA.time` (RFC 3339, wall clock).
//!   The exporter writes the event as the span ends, so the span ends at the
//!   event's own time and starts the difference of the two stamps before:
//!   no wall-clock-to-monotonic conversion is involved. The span keeps the
//!   ids its SDK gave it (`PartA.ext_dt_traceId`, `PartA.ext_dt_spanId`,
//!   `PartB.parentId`), which OTLP export sends on ([`otel_ids`]).
//! - Part A, B and C are structs, so `PartB.name` is member `name` of the
//!   struct field `PartB` ([`find_field`]); a JSON-lines file from before
//!   structs were nested holds the same as a flat field of that name, which
//!   reads alike.

use std::borrow::Cow;

use chrono::DateTime;
use usertrace::{EVENTHEADER_EVENT_FIELD, EVENTHEADER_PROVIDER_FIELD};

use crate::record::{find_field, EventRecord, Value};

/// Common Schema: the record type, the span's name, its start and its end.
const TYPE_NAME_FIELD: &str = "PartB._typeName";
const SPAN_TYPE_NAME: &str = "Span";
const NAME_FIELD: &str = "PartB.name";
const START_TIME_FIELD: &str = "PartB.startTime";
const END_TIME_FIELD: &str = "PartA.time";
const TRACE_ID_FIELD: &str = "PartA.ext_dt_traceId";
const SPAN_ID_FIELD: &str = "PartA.ext_dt_spanId";
const PARENT_ID_FIELD: &str = "PartB.parentId";
/// Common Schema: false when the span's status was Error, and what the
/// SDK said went wrong (absent when an HTTP status code says it).
const SUCCESS_FIELD: &str = "PartB.success";
const STATUS_MESSAGE_FIELD: &str = "PartB.statusMessage";

fn text<'a>(e: &'a EventRecord, name: &str) -> Option<&'a str> {
    arg(&e.fields, name)
}

fn arg<'a>(args: &'a [(String, Value)], name: &str) -> Option<&'a str> {
    match find_field(args, name)? {
        Value::Str(s) => Some(s.as_str()),
        _ => None,
    }
}

/// `<provider>:<event>` for an EventHeader event, as Microsoft's decoders
/// name it; `None` for any other event.
pub(super) fn event_name(e: &EventRecord) -> Option<String> {
    provider_and_event(e).map(qualified)
}

/// An EventHeader event's provider and event names, from its fields.
fn provider_and_event(e: &EventRecord) -> Option<(&str, &str)> {
    Some((text(e, EVENTHEADER_PROVIDER_FIELD)?, text(e, EVENTHEADER_EVENT_FIELD)?))
}

/// `<provider>:<event>`, the core's one spelling of an EventHeader event's name.
fn qualified((provider, event): (&str, &str)) -> String {
    usertrace::eventheader_event_name(provider, event)
}

/// The name an EventHeader event's slice or instant goes by: a Common
/// Schema span's own name (even when its stamps do not make it a span),
/// else [`event_name`]; `None` for any other event.
pub(super) fn timeline_name(e: &EventRecord) -> Option<String> {
    // Each field looked up once: this runs for every event of a timeline.
    let names = provider_and_event(e)?;
    match text(e, NAME_FIELD) {
        // Its own name, with no `<provider>:<event>` built and dropped.
        Some(name) if text(e, TYPE_NAME_FIELD) == Some(SPAN_TYPE_NAME) => Some(name.to_owned()),
        _ => Some(qualified(names)),
    }
}

/// A Common Schema span's start and length in ns, on the event's clock.
///
/// `None` unless both stamps parse and the end is not before the start
/// (the event is then an instant, its fields intact).
pub(super) fn completed_span(e: &EventRecord) -> Option<(u64, u64)> {
    if text(e, TYPE_NAME_FIELD) != Some(SPAN_TYPE_NAME) || text(e, EVENTHEADER_PROVIDER_FIELD).is_none() {
        return None;
    }
    let start = DateTime::parse_from_rfc3339(text(e, START_TIME_FIELD)?).ok()?;
    let end = DateTime::parse_from_rfc3339(text(e, END_TIME_FIELD)?).ok()?;
    let duration_ns = u64::try_from((end - start).num_nanoseconds()?).ok()?;
    Some((e.time_ns.saturating_sub(duration_ns), duration_ns))
}

/// The ids an OpenTelemetry SDK gave a span, as its user_events trace
/// exporter writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OtelIds {
    /// The trace the span belongs to.
    pub trace_id: [u8; 16],
    /// The span's own id.
    pub span_id: [u8; 8],
    /// Its parent's span id; `None` for a root span.
    pub parent_span_id: Option<[u8; 8]>,
}

/// The SDK's ids among a span's `args` (a Common Schema span's fields), or
/// `None` unless both the trace id (32 hex digits) and the span id (16)
/// are there and well formed. A parent id that is not 16 hex digits is no
/// parent.
pub fn otel_ids(args: &[(String, Value)]) -> Option<OtelIds> {
    if arg(args, TYPE_NAME_FIELD) != Some(SPAN_TYPE_NAME) {
        return None;
    }
    Some(OtelIds {
        trace_id: hex_id(arg(args, TRACE_ID_FIELD)?)?,
        span_id: hex_id(arg(args, SPAN_ID_FIELD)?)?,
        parent_span_id: arg(args, PARENT_ID_FIELD).and_then(hex_id),
    })
}

/// Common Schema: the span's kind, as the exporter numbers it (0
/// internal, 1 server, 2 client, 3 producer, 4 consumer).
const KIND_FIELD: &str = "PartB.kind";
/// Common Schema: the application's own attributes, each `PartC.<key>`.
const ATTRIBUTE_PREFIX: &str = "PartC.";
/// The envelope fields a span is read from ([`completed_span`],
/// [`otel_ids`], [`otel_failure`], [`otel_kind`]), which OTLP carries in
/// the span itself rather than as attributes.
const SPAN_ENVELOPE: [&str; 11] = [
    TYPE_NAME_FIELD,
    NAME_FIELD,
    START_TIME_FIELD,
    END_TIME_FIELD,
    TRACE_ID_FIELD,
    SPAN_ID_FIELD,
    PARENT_ID_FIELD,
    SUCCESS_FIELD,
    STATUS_MESSAGE_FIELD,
    KIND_FIELD,
    EVENTHEADER_PROVIDER_FIELD,
];

/// A Common Schema span's kind, 0 (internal) to 4 (consumer), if given.
pub fn otel_kind(args: &[(String, Value)]) -> Option<u64> {
    find_field(args, KIND_FIELD).and_then(Value::as_u64).filter(|k| *k <= 4)
}

/// The attributes an OpenTelemetry SDK gave a Common Schema span, under
/// the names it gave them (`PartC.amount` is `amount`), then any other
/// field that is not part of the span's envelope, under its own name
/// (`PartA.ext_cloud_role`, `PartB.httpStatusCode`); `None` for what is
/// not a Common Schema span.
pub fn otel_attributes(args: &[(String, Value)]) -> Option<Vec<(Cow<'_, str>, &Value)>> {
    if arg(args, TYPE_NAME_FIELD) != Some(SPAN_TYPE_NAME) {
        return None;
    }
    let parts = parts_members(args);
    let own = parts.iter().filter_map(|(n, v)| Some((Cow::Owned(n.strip_prefix(ATTRIBUTE_PREFIX)?.to_owned()), *v)));
    let rest = parts
        .iter()
        .filter(|(n, _)| !n.starts_with(ATTRIBUTE_PREFIX) && !SPAN_ENVELOPE.contains(&n.as_ref()) && n != EVENTHEADER_EVENT_FIELD)
        .map(|(n, v)| (n.clone(), *v));
    Some(own.chain(rest).collect())
}

/// The fields, each struct field's members in its place as `part.member`
/// (one level: a member that is a struct itself stays one value), so that
/// Part A, B and C read alike whether nested or flat.
fn parts_members(args: &[(String, Value)]) -> Vec<(Cow<'_, str>, &Value)> {
    let mut out = Vec::with_capacity(args.len());
    for (name, value) in args {
        match value {
            Value::Struct(members) => {
                out.extend(members.iter().map(|(member, v)| (Cow::Owned(format!("{name}.{member}")), v)));
            }
            _ => out.push((Cow::Borrowed(name.as_str()), value)),
        }
    }
    out
}

/// Why a Common Schema span failed, if its SDK set its status to Error
/// (`PartB.success` false): `PartB.statusMessage`, else
/// `PartB.httpStatusCode`'s value, else an empty message.
pub fn otel_failure(args: &[(String, Value)]) -> Option<String> {
    if arg(args, TYPE_NAME_FIELD) != Some(SPAN_TYPE_NAME) {
        return None;
    }
    if !matches!(find_field(args, SUCCESS_FIELD), Some(Value::Bool(false))) {
        return None;
    }
    let http = find_field(args, "PartB.httpStatusCode").map(|v| format!("HTTP {v}"));
    Some(arg(args, STATUS_MESSAGE_FIELD).map(str::to_owned).or(http).unwrap_or_default())
}

/// `N` bytes from exactly `2N` hex digits, as OpenTelemetry prints ids.
fn hex_id<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(text.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

//! EventHeader events: self-describing payloads written by Microsoft's
//! LinuxTracepoints (C, C++, Rust), OpenTelemetry's user_events exporters
//! and the .NET runtime.
//!
//! Such a tracepoint is named `<Provider>_L<level>K<keyword>[G<group>][options]`
//! and registered as `u8 eventheader_flags; u8 version; u16 id; u16 tag;
//! u8 opcode; u8 level`; the rest of each payload (extensions: metadata with
//! the event's name and field types, activity ids; then the field values) is
//! not in the format file. Microsoft's `tracepoint_decode` walks it: this
//! module only maps what it yields into the consumer's `(name, FieldValue)`
//! model, so every output takes these events as it takes any other.
//!
//! The mapping:
//! - an array is a [`FieldValue::Array`] of its elements and a struct a
//!   [`FieldValue::Struct`] of its members, nested as the event nests them,
//!   as `tracepoint_decode`'s JSON gives them (`"arr": [1, 2]`,
//!   `"pt": {"x": 1}`);
//! - integers of up to 64 bits in decimal, signed or unsigned, pid and port
//!   formats, floats and booleans 0/1 keep their types;
//! - binary data (hex bytes) stays bytes;
//! - everything else (strings of 8-, 16- and 32-bit chars, 128-bit values,
//!   hex, errno, time, uuid, IP addresses, JSON, booleans outside 0/1) is the
//!   string `tracepoint_decode` prints for it, the same text its JSON carries;
//! - the header and extensions follow the fields as `meta.*`, named and
//!   left out (when zero or absent) as in `tracepoint_decode`'s JSON `meta`
//!   object: `meta.provider`, `meta.event` always, then `meta.id`,
//!   `meta.version`, `meta.level`, `meta.keyword`, `meta.opcode`, `meta.tag`
//!   (numbers), `meta.activity`, `meta.relatedActivity` (UUID text),
//!   `meta.options` (the name's suffix after the keyword and group, e.g.
//!   `Gmygroup`) and `meta.flags` (the header's flags byte);
//! - field tags are not kept;
//! - an activity start (opcode 1) or stop (2) with an activity id starts
//!   with `span_begin` or `span_end`, the id folded by [`span_id`], so the
//!   timeline and OTLP make it a span (output/src/timeline.rs).

use std::borrow::Cow;

use eventheader_types::{FieldEncoding, FieldFormat, Guid, Opcode};
use tracepoint_decode::{
    EventHeaderEnumeratorContext, EventHeaderEnumeratorError, EventHeaderEnumeratorState, PerfConvertOptions,
    PerfItemValue,
};
use usertrace::{EVENTHEADER_EVENT_FIELD, EVENTHEADER_PROVIDER_FIELD};

use super::decode::FieldValue;
use super::error::{DecodeError, EventHeaderError};
use super::format::EventFormat;

/// The first field of every EventHeader tracepoint's format, as
/// `tracepoint_decode` itself recognises them.
pub const FLAGS_FIELD: &str = "eventheader_flags";

/// Whether `format` is an EventHeader tracepoint's (its first field is
/// `eventheader_flags`), whose payload [`decode_eventheader`] reads.
pub fn is_eventheader(format: &EventFormat) -> bool {
    format.fields.first().is_some_and(|f| f.name == FLAGS_FIELD)
}

/// The library's text form, as in its JSON but with strings kept exact
/// (our writers escape them): no control-character filtering.
const TEXT: PerfConvertOptions = PerfConvertOptions::Default.and_not(PerfConvertOptions::StringControlCharsMask);

/// One decoded field: its (possibly composed) name and its value.
pub type Field<'a> = (Cow<'a, str>, FieldValue<'a>);

/// Decodes an EventHeader event's fields and then its `meta.*` header
/// fields, from `raw` (`trace_entry` + payload, as [`decode`](fn@crate::decode)
/// takes it).
///
/// A payload that does not follow the format (cut metadata, a length past
/// the end, an unknown encoding) is a [`DecodeError::EventHeader`], never a
/// panic.
pub fn decode_eventheader<'a>(format: &EventFormat, raw: &'a [u8]) -> Result<Vec<Field<'a>>, DecodeError> {
    let start = format.fields.first().map_or(0, |f| f.offset);
    let data = raw.get(start..).ok_or(DecodeError::EventHeader { error: EventHeaderError::InvalidParameter, at: 0 })?;
    let mut context = EventHeaderEnumeratorContext::new();
    let mut e = context
        .enumerate_with_name_and_data(&format.name, data, EventHeaderEnumeratorContext::MOVE_NEXT_LIMIT_DEFAULT)
        .map_err(|error| DecodeError::EventHeader { error: error.into(), at: 0 })?;

    let mut out = Vec::new();
    // Arrays and structs entered and not yet left, innermost last, each with
    // its name and what it holds so far.
    let mut open: Vec<(Cow<'a, str>, Container<'a>)> = Vec::new();
    while e.move_next() {
        let state = e.state();
        if matches!(state, EventHeaderEnumeratorState::ArrayEnd | EventHeaderEnumeratorState::StructEnd) {
            if let Some((name, container)) = open.pop() {
                place(&mut open, &mut out, name, container.into_value());
            }
            continue;
        }
        let item = e.item_info();
        let name = String::from_utf8_lossy(item.name_bytes());
        match state {
            EventHeaderEnumeratorState::ArrayBegin => open.push((name, Container::Array(Vec::new()))),
            EventHeaderEnumeratorState::StructBegin => open.push((name, Container::Struct(Vec::new()))),
            _ => place(&mut open, &mut out, name, value_of(item.value())),
        }
    }
    if e.state() == EventHeaderEnumeratorState::Error {
        let at = data.len() - e.raw_data_position().len();
        return Err(DecodeError::EventHeader { error: e.last_error().into(), at: start + at });
    }

    let info = e.event_info();
    let header = info.header();
    let mut meta = |name: &'static str, value: FieldValue<'a>| out.push((Cow::Borrowed(name), value));
    meta(EVENTHEADER_PROVIDER_FIELD, FieldValue::Str(info.provider_name().to_owned().into()));
    meta(EVENTHEADER_EVENT_FIELD, FieldValue::Str(String::from_utf8_lossy(info.name_bytes())));
    // Numbers the library leaves out of its JSON when zero, left out here too.
    let numbers = [
        ("meta.id", u64::from(header.id)),
        ("meta.version", u64::from(header.version)),
        ("meta.level", u64::from(header.level.as_int())),
        ("meta.keyword", info.keyword()),
        ("meta.opcode", u64::from(header.opcode.as_int())),
        ("meta.tag", u64::from(header.tag)),
    ];
    for (name, value) in numbers.into_iter().filter(|(_, v)| *v != 0) {
        meta(name, FieldValue::Unsigned(value));
    }
    // The library prints activity ids as big-endian UUIDs (its JSON does).
    if let Some(id) = info.activity_id() {
        meta("meta.activity", FieldValue::Str(Guid::from_bytes_be(id).to_string().into()));
    }
    if let Some(id) = info.related_activity_id() {
        meta("meta.relatedActivity", FieldValue::Str(Guid::from_bytes_be(id).to_string().into()));
    }
    if !info.options().is_empty() {
        meta("meta.options", FieldValue::Str(info.options().to_owned().into()));
    }
    if header.flags.as_int() != 0 {
        meta("meta.flags", FieldValue::Unsigned(header.flags.as_int().into()));
    }
    // An activity's start and stop are the timeline's span begin and end
    // (output/src/timeline.rs): the span's id, first, is the activity id
    // folded to the 64 nonzero bits that convention wants.
    let span = match header.opcode {
        Opcode::ActivityStart => Some(usertrace::span::SPAN_BEGIN_FIELD),
        Opcode::ActivityStop => Some(usertrace::span::SPAN_END_FIELD),
        _ => None,
    };
    if let Some((name, id)) = span.zip(info.activity_id()) {
        out.insert(0, (Cow::Borrowed(name), FieldValue::Unsigned(span_id(id))));
    }
    Ok(out)
}

/// An array or a struct being read: what it holds so far.
enum Container<'a> {
    Array(Vec<FieldValue<'a>>),
    Struct(Vec<Field<'a>>),
}

impl<'a> Container<'a> {
    fn into_value(self) -> FieldValue<'a> {
        match self {
            Container::Array(items) => FieldValue::Array(items),
            Container::Struct(members) => FieldValue::Struct(members),
        }
    }
}

/// Puts a value read in its place: into the innermost open array (whose
/// elements repeat the array's own name, so it is dropped) or struct, or
/// among the event's fields.
fn place<'a>(open: &mut [(Cow<'a, str>, Container<'a>)], out: &mut Vec<Field<'a>>, name: Cow<'a, str>, value: FieldValue<'a>) {
    match open.last_mut() {
        Some((_, Container::Array(items))) => items.push(value),
        Some((_, Container::Struct(members))) => members.push((name, value)),
        None => out.push((name, value)),
    }
}

/// The two halves of an activity id XORed, 1 if that is 0.
pub fn span_id(activity: &[u8; 16]) -> u64 {
    let (high, low) = activity.split_at(8);
    let fold = u64::from_be_bytes(high.try_into().unwrap_or_default())
        ^ u64::from_be_bytes(low.try_into().unwrap_or_default());
    fold.max(1)
}

/// One value (a scalar or one array element) in our model: types kept where
/// the library's JSON writes a plain number, bool or bytes; its text otherwise.
fn value_of<'a>(value: &PerfItemValue<'a>) -> FieldValue<'a> {
    let meta = value.metadata();
    let encoding = meta.encoding();
    let format = meta.format();
    let int = matches!(
        encoding,
        FieldEncoding::Value8 | FieldEncoding::Value16 | FieldEncoding::Value32 | FieldEncoding::Value64
    );
    let width = value.bytes().len();
    if int {
        match (format, width) {
            (FieldFormat::Default | FieldFormat::UnsignedInt, 1) => return FieldValue::Unsigned(value.to_u8(0).into()),
            (FieldFormat::Default | FieldFormat::UnsignedInt, 2) => {
                return FieldValue::Unsigned(value.to_u16(0).into())
            }
            (FieldFormat::Default | FieldFormat::UnsignedInt, 4) => {
                return FieldValue::Unsigned(value.to_u32(0).into())
            }
            (FieldFormat::Default | FieldFormat::UnsignedInt, 8) => return FieldValue::Unsigned(value.to_u64(0)),
            (FieldFormat::SignedInt, 1) => return FieldValue::Signed(value.to_i8(0).into()),
            (FieldFormat::SignedInt, 2) => return FieldValue::Signed(value.to_i16(0).into()),
            (FieldFormat::SignedInt | FieldFormat::Pid, 4) => return FieldValue::Signed(value.to_i32(0).into()),
            (FieldFormat::SignedInt, 8) => return FieldValue::Signed(value.to_i64(0)),
            (FieldFormat::Port, 2) => return FieldValue::Unsigned(value.to_port(0).into()),
            (FieldFormat::Float, 4) => return FieldValue::F32(value.to_f32(0)),
            (FieldFormat::Float, 8) => return FieldValue::F64(value.to_f64(0)),
            (FieldFormat::Boolean, _) => {
                let v = match width {
                    1 => u32::from(value.to_u8(0)),
                    2 => u32::from(value.to_u16(0)),
                    4 => value.to_u32(0),
                    _ => u32::MAX,
                };
                if v <= 1 {
                    return FieldValue::Bool(v == 1);
                }
            }
            _ => {}
        }
    }
    // Binary data: counted 8-bit "chars" shown as hex bytes, which is how
    // eventheader's `binary` type writes them (StringLength16Char8 +
    // HexBytes) and what BinaryLength16Char8 means by default.
    let counted = matches!(encoding, FieldEncoding::BinaryLength16Char8 | FieldEncoding::StringLength16Char8);
    let binary_default = encoding == FieldEncoding::BinaryLength16Char8 && format == FieldFormat::Default;
    if counted && (format == FieldFormat::HexBytes || binary_default) {
        return FieldValue::Bytes(value.bytes());
    }
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = value.write_scalar_to(&mut text, TEXT);
    FieldValue::Str(text.into())
}

impl From<EventHeaderEnumeratorError> for EventHeaderError {
    fn from(error: EventHeaderEnumeratorError) -> Self {
        match error {
            EventHeaderEnumeratorError::InvalidParameter => EventHeaderError::InvalidParameter,
            EventHeaderEnumeratorError::NotSupported => EventHeaderError::NotSupported,
            EventHeaderEnumeratorError::ImplementationLimit => EventHeaderError::ImplementationLimit,
            EventHeaderEnumeratorError::StackOverflow => EventHeaderError::StackOverflow,
            // Success and NotEventHeader do not come from a failed walk of
            // a payload; InvalidData is what is left.
            _ => EventHeaderError::InvalidData,
        }
    }
}

#[cfg(test)]
#[path = "eventheader_tests.rs"]
mod tests;

//! Reading typed values out of a raw tracepoint record.
//!
//! The raw record is what perf puts in `PERF_SAMPLE_RAW`: the 8-byte
//! `trace_entry` followed by the payload, at the offsets of the format file.
//! Every read is bounds-checked; a record that does not fit its format gives
//! a [`DecodeError`].

use std::borrow::Cow;
use std::fmt;

use super::error::DecodeError;
use super::format::{EventFormat, FieldKind};

/// One decoded field value, borrowing strings and bytes from the record.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue<'a> {
    /// An unsigned integer of any width, or a `bool` field holding neither 0 nor 1.
    Unsigned(u64),
    /// A signed integer of any width.
    Signed(i64),
    /// A `bool` field.
    Bool(bool),
    /// An `f32` field.
    F32(f32),
    /// An `f64` field.
    F64(f64),
    /// A string, with invalid UTF-8 replaced.
    Str(Cow<'a, str>),
    /// A bytes field, or a fixed field of a type this crate does not know.
    Bytes(&'a [u8]),
    /// An EventHeader array: its elements, in order.
    Array(Vec<FieldValue<'a>>),
    /// An EventHeader struct: its members, in declaration order.
    Struct(Vec<(Cow<'a, str>, FieldValue<'a>)>),
}

impl fmt::Display for FieldValue<'_> {
    /// The text form: numbers in decimal, strings as they are (as perf
    /// prints them), bytes as lowercase hex, arrays as `[1, 2]` and structs
    /// as `{x=1, y=2}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Unsigned(v) => write!(f, "{v}"),
            FieldValue::Signed(v) => write!(f, "{v}"),
            FieldValue::Bool(v) => write!(f, "{v}"),
            FieldValue::F32(v) => write!(f, "{v}"),
            FieldValue::F64(v) => write!(f, "{v}"),
            FieldValue::Str(s) => f.write_str(s),
            FieldValue::Bytes(b) => b.iter().try_for_each(|x| write!(f, "{x:02x}")),
            FieldValue::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    write!(f, "{}{item}", if i > 0 { ", " } else { "" })?;
                }
                f.write_str("]")
            }
            FieldValue::Struct(members) => {
                f.write_str("{")?;
                for (i, (name, value)) in members.iter().enumerate() {
                    write!(f, "{}{name}={value}", if i > 0 { ", " } else { "" })?;
                }
                f.write_str("}")
            }
        }
    }
}

/// The value at `path` among decoded `fields`: the field of that exact
/// name, else, for `a.b.c`, member `c` of struct member `b` of struct
/// field `a` (an EventHeader event's). The exact name comes first because
/// a field's own name may hold a dot. The core's rule
/// ([`usertrace::find_field_by_path`]), as `usertrace_output::find_field`
/// applies it to the recorded model.
///
/// ```
/// use std::borrow::Cow;
/// use usertrace_consumer::{find_field, FieldValue};
///
/// let pt = FieldValue::Struct(vec![(Cow::Borrowed("x"), FieldValue::Unsigned(7))]);
/// let fields = [(Cow::Borrowed("pt"), pt)];
/// assert_eq!(find_field(&fields, "pt.x"), Some(&FieldValue::Unsigned(7)));
/// assert_eq!(find_field(&fields, "pt.y"), None);
/// ```
pub fn find_field<'f, 'a>(fields: &'f [(Cow<'a, str>, FieldValue<'a>)], path: &str) -> Option<&'f FieldValue<'a>> {
    usertrace::find_field_by_path(fields, path, |v| match v {
        FieldValue::Struct(members) => Some(members.as_slice()),
        _ => None,
    })
}

/// Decodes every field of `format` from `raw`, in declaration order.
///
/// `raw` is an event's `trace_entry` and payload, as in [`Event::raw`](crate::Event::raw).
///
/// ```
/// use usertrace::wire::{dyn_loc, TRACE_ENTRY_LEN};
/// use usertrace_consumer::{decode, EventFormat, FieldValue};
///
/// // tracefs' events/user_events/myapp_request/format, common_* fields left out.
/// let format = EventFormat::parse(
///     "user_events",
///     "name: myapp_request\n\
///      ID: 1500\n\
///      format:\n\
///      \tfield:u32 status;\toffset:8;\tsize:4;\tsigned:0;\n\
///      \tfield:__rel_loc char[] path;\toffset:12;\tsize:4;\tsigned:1;\n",
/// )?;
///
/// // What the producer wrote for `(200, "/index.html")`, after the kernel's
/// // 8-byte trace_entry: the string's data follows its `__rel_loc` word.
/// let mut raw = vec![0u8; TRACE_ENTRY_LEN];
/// raw.extend_from_slice(&200u32.to_ne_bytes());
/// raw.extend_from_slice(&dyn_loc(0, 12).to_ne_bytes());
/// raw.extend_from_slice(b"/index.html\0");
///
/// let values = decode(&format, &raw)?;
/// assert_eq!(values, [("status", FieldValue::Unsigned(200)), ("path", FieldValue::Str("/index.html".into()))]);
/// // A cut record is an error, not a panic.
/// assert!(decode(&format, &raw[..14]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode<'a>(format: &'a EventFormat, raw: &'a [u8]) -> Result<Vec<(&'a str, FieldValue<'a>)>, DecodeError> {
    let mut out = Vec::with_capacity(format.fields.len());
    decode_each(format, raw, |name, value| out.push((name, value)))?;
    Ok(out)
}

/// [`decode`], handing each field to `each` in declaration order rather
/// than collecting them: callers that keep fields in another shape need
/// no vector in between. On an error, the fields before it were handed.
pub(crate) fn decode_each<'a>(
    format: &'a EventFormat,
    raw: &'a [u8],
    mut each: impl FnMut(&'a str, FieldValue<'a>),
) -> Result<(), DecodeError> {
    for (index, field) in format.fields.iter().enumerate() {
        let fixed = raw
            .get(field.offset..field.offset + field.size)
            .ok_or(DecodeError::Truncated { field: index, len: raw.len() })?;
        let value = match field.kind {
            FieldKind::Int { signed } => int(fixed, signed),
            FieldKind::Bool => match fixed[0] {
                0 => FieldValue::Bool(false),
                1 => FieldValue::Bool(true),
                // Not written by our producer: keep the number.
                other => FieldValue::Unsigned(other.into()),
            },
            FieldKind::F32 => FieldValue::F32(f32::from_bits(u32::from_ne_bytes(array(fixed)))),
            FieldKind::F64 => FieldValue::F64(f64::from_bits(u64::from_ne_bytes(array(fixed)))),
            FieldKind::CharArray => FieldValue::Str(until_nul(fixed)),
            FieldKind::Bytes => FieldValue::Bytes(fixed),
            FieldKind::LocStr { relative } => FieldValue::Str(until_nul(located(raw, field.offset, fixed, relative, index)?)),
            FieldKind::LocBytes { relative } => FieldValue::Bytes(located(raw, field.offset, fixed, relative, index)?),
        };
        each(field.name.as_str(), value);
    }
    Ok(())
}

fn int(bytes: &[u8], signed: bool) -> FieldValue<'static> {
    match (bytes.len(), signed) {
        (1, false) => FieldValue::Unsigned(bytes[0].into()),
        (1, true) => FieldValue::Signed((bytes[0] as i8).into()),
        (2, false) => FieldValue::Unsigned(u16::from_ne_bytes(array(bytes)).into()),
        (2, true) => FieldValue::Signed(i16::from_ne_bytes(array(bytes)).into()),
        (4, false) => FieldValue::Unsigned(u32::from_ne_bytes(array(bytes)).into()),
        (4, true) => FieldValue::Signed(i32::from_ne_bytes(array(bytes)).into()),
        (8, false) => FieldValue::Unsigned(u64::from_ne_bytes(array(bytes))),
        (_, _) => FieldValue::Signed(i64::from_ne_bytes(array(bytes))),
    }
}

/// Copies exactly N bytes; callers pass slices whose length the format
/// parser tied to N, and a mismatch yields zeroes rather than a panic.
fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    if bytes.len() == N {
        out.copy_from_slice(bytes);
    }
    out
}

/// The data a loc word points at: `len << 16 | offset`, where the offset
/// counts from the record start (`__data_loc`) or from the end of the loc
/// word itself (`__rel_loc`).
fn located<'a>(raw: &'a [u8], at: usize, word: &[u8], relative: bool, index: usize) -> Result<&'a [u8], DecodeError> {
    let loc = u32::from_ne_bytes(array(word));
    let (offset, len) = usertrace::wire::split_dyn_loc(loc);
    let (offset, len) = (usize::from(offset), usize::from(len));
    let start = if relative { at + 4 + offset } else { offset };
    raw.get(start..start + len).ok_or(DecodeError::BadLocation { field: index })
}

fn until_nul(bytes: &[u8]) -> Cow<'_, str> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::tests::ALL_TYPES;

    /// A record for ALL_TYPES built the way the producer writes it.
    fn record(msg: &[u8], blob: &[u8]) -> Vec<u8> {
        let mut r = vec![0u8; 8]; // trace_entry
        r.push(200); // a
        r.extend_from_slice(&(-300i16).to_ne_bytes()); // b
        r.extend_from_slice(&70_000u32.to_ne_bytes()); // c
        r.extend_from_slice(&(-5_000_000_000i64).to_ne_bytes()); // d
        r.push(1); // e
        r.extend_from_slice(&1.5f32.to_bits().to_ne_bytes()); // f
        r.extend_from_slice(&(-0.25f64).to_bits().to_ne_bytes()); // g
        r.extend_from_slice(b"ab\0\0"); // h
        // i at 40: its data starts right after j's word (offset 48), i.e. 4
        // bytes after the end of i's own word.
        r.extend_from_slice(&usertrace::wire::dyn_loc(4, msg.len() as u16).to_ne_bytes());
        r.extend_from_slice(&usertrace::wire::dyn_loc(msg.len() as u16, blob.len() as u16).to_ne_bytes());
        r.extend_from_slice(msg);
        r.extend_from_slice(blob);
        r
    }

    #[test]
    fn every_type_reads_back_its_value() {
        let format = EventFormat::parse("user_events", ALL_TYPES).unwrap();
        let raw = record("héllo\0".as_bytes(), &[0xde, 0xad]);
        let values = decode(&format, &raw).unwrap();
        assert_eq!(
            values,
            vec![
                ("a", FieldValue::Unsigned(200)),
                ("b", FieldValue::Signed(-300)),
                ("c", FieldValue::Unsigned(70_000)),
                ("d", FieldValue::Signed(-5_000_000_000)),
                ("e", FieldValue::Bool(true)),
                ("f", FieldValue::F32(1.5)),
                ("g", FieldValue::F64(-0.25)),
                ("h", FieldValue::Str("ab".into())),
                ("i", FieldValue::Str("héllo".into())),
                ("j", FieldValue::Bytes(&[0xde, 0xad])),
            ]
        );
        let text: Vec<String> = values.iter().map(|(n, v)| format!("{n}={v}")).collect();
        assert_eq!(text.join(" "), "a=200 b=-300 c=70000 d=-5000000000 e=true f=1.5 g=-0.25 h=ab i=héllo j=dead");
    }

    #[test]
    fn truncated_records_are_errors() {
        let format = EventFormat::parse("user_events", ALL_TYPES).unwrap();
        let raw = record(b"hi\0", b"x");
        for len in 0..raw.len() {
            assert!(decode(&format, &raw[..len]).is_err(), "prefix of {len} bytes decoded");
        }
        assert_eq!(decode(&format, &raw[..20]), Err(DecodeError::Truncated { field: 3, len: 20 }));
    }

    #[test]
    fn locations_outside_the_record_are_errors() {
        let format = EventFormat::parse("user_events", ALL_TYPES).unwrap();
        let mut raw = record(b"hi\0", b"x");
        raw[40..44].copy_from_slice(&usertrace::wire::dyn_loc(0xfff0, 3).to_ne_bytes());
        assert_eq!(decode(&format, &raw), Err(DecodeError::BadLocation { field: 8 }));
    }
}

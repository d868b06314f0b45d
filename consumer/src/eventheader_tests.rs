//! Tests of the EventHeader decoder on payloads laid out byte by byte from
//! the EventHeader spec (eventheader_types' `EventHeader`,
//! `EventHeaderExtension`, `FieldEncoding`, `FieldFormat`), each also held
//! field by field to `tracepoint_decode`'s own JSON of the same bytes.
//! Payloads from Microsoft's encoders are the guest-kernel tests' business.

use std::borrow::Cow;

use super::*;
use crate::{EventFormat, EventHeaderError, FieldValue};

#[path = "../tests/support/eventheader_json.rs"]
mod library_json;

const FORMAT: &str = "name: MyProvider_L4K1Gmygroup\n\
ID: 1234\n\
format:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\n\
\tfield:u8 eventheader_flags;\toffset:8;\tsize:1;\tsigned:0;\n\
\tfield:u8 version;\toffset:9;\tsize:1;\tsigned:0;\n\
\tfield:u16 id;\toffset:10;\tsize:2;\tsigned:0;\n\
\tfield:u16 tag;\toffset:12;\tsize:2;\tsigned:0;\n\
\tfield:u8 opcode;\toffset:14;\tsize:1;\tsigned:0;\n\
\tfield:u8 level;\toffset:15;\tsize:1;\tsigned:0;\n";

fn format() -> EventFormat {
    EventFormat::parse("user_events", FORMAT).unwrap()
}

// FieldEncoding values; | 0x80 says a format byte follows, whose | 0x80 says
// a u16 tag follows. 0x20: constant-length array (u16 count in metadata),
// 0x40: variable-length array (u16 count in data).
const STRUCT: u8 = 1;
const V8: u8 = 2;
const V16: u8 = 3;
const V32: u8 = 4;
const V64: u8 = 5;
const V128: u8 = 6;
const ZSTR8: u8 = 7;
const ZSTR32: u8 = 9;
const STR16_8: u8 = 10;
const STR16_16: u8 = 11;
const BIN16: u8 = 13;
const CARRAY: u8 = 0x20;
const VARRAY: u8 = 0x40;
// FieldFormat values.
const SIGNED: u8 = 2;
const HEX: u8 = 3;
const ERRNO: u8 = 4;
const PID: u8 = 5;
const TIME: u8 = 6;
const BOOLEAN: u8 = 7;
const FLOAT: u8 = 8;
const HEX_BYTES: u8 = 9;
const STRING_JSON: u8 = 14;
const UUID: u8 = 15;
const PORT: u8 = 16;
const IPV4: u8 = 17;
const IPV6: u8 = 18;

/// An event's metadata and data, built field by field.
#[derive(Default)]
struct Payload {
    meta: Vec<u8>,
    data: Vec<u8>,
}

impl Payload {
    fn new(event_name: &str) -> Payload {
        let mut p = Payload::default();
        p.meta.extend_from_slice(event_name.as_bytes());
        p.meta.push(0);
        p
    }

    /// A field's metadata: name, encoding, and a format when not default.
    fn field(&mut self, name: &str, encoding: u8, format: u8) -> &mut Self {
        self.meta.extend_from_slice(name.as_bytes());
        self.meta.push(0);
        if format == 0 {
            self.meta.push(encoding);
        } else {
            self.meta.extend_from_slice(&[encoding | 0x80, format]);
        }
        self
    }

    fn data(&mut self, bytes: &[u8]) -> &mut Self {
        self.data.extend_from_slice(bytes);
        self
    }

    /// The raw record: trace_entry, header (flags 7: 64-bit, little-endian,
    /// extensions), an activity-id extension when given, the metadata
    /// extension, the data.
    /// `header` is the header after its flags: version, id (2 bytes, LE),
    /// tag (2), opcode, level.
    fn raw(&self, header: [u8; 7], activity: &[u8]) -> Vec<u8> {
        let mut r = vec![0u8; 8];
        r.push(7);
        r.extend_from_slice(&header);
        if !activity.is_empty() {
            r.extend_from_slice(&(activity.len() as u16).to_le_bytes());
            r.extend_from_slice(&(2u16 | 0x8000).to_le_bytes()); // ActivityId, chained
            r.extend_from_slice(activity);
        }
        r.extend_from_slice(&(self.meta.len() as u16).to_le_bytes());
        r.extend_from_slice(&1u16.to_le_bytes()); // Metadata, last
        r.extend_from_slice(&self.meta);
        r.extend_from_slice(&self.data);
        r
    }
}

/// version 0, id 0, tag 0, opcode 0, level 4.
const PLAIN: [u8; 7] = [0, 0, 0, 0, 0, 0, 4];

fn every_type() -> Payload {
    let mut p = Payload::new("Every");
    p.field("u8", V8, 0).data(&[200]);
    p.field("i16", V16, SIGNED).data(&(-300i16).to_le_bytes());
    p.field("u64", V64, 0).data(&u64::MAX.to_le_bytes());
    p.field("past63", V64, 0).data(&(1u64 << 63 | 5).to_le_bytes());
    p.field("i64", V64, SIGNED).data(&i64::MIN.to_le_bytes());
    p.field("hex", V32, HEX).data(&0xdead_beefu32.to_le_bytes());
    p.field("errno", V32, ERRNO).data(&2u32.to_le_bytes());
    p.field("pid", V32, PID).data(&1234i32.to_le_bytes());
    p.field("time", V64, TIME).data(&86_400i64.to_le_bytes());
    p.field("yes", V8, BOOLEAN).data(&[1]);
    p.field("odd_bool", V32, BOOLEAN).data(&7u32.to_le_bytes());
    p.field("f32", V32, FLOAT).data(&1.5f32.to_le_bytes());
    p.field("f64", V64, FLOAT).data(&(-0.25f64).to_le_bytes());
    p.field("u128", V128, 0).data(&(0u8..16).collect::<Vec<_>>());
    p.field("uuid", V128, UUID).data(&[0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8]);
    p.field("ipv4", V32, IPV4).data(&[127, 0, 0, 1]);
    p.field("port", V16, PORT).data(&8080u16.to_be_bytes());
    let mut v6 = [0u8; 16];
    v6[15] = 1;
    p.field("ipv6", V128, IPV6).data(&v6);
    p.field("z8", ZSTR8, 0).data("héllo\0".as_bytes());
    let utf16: Vec<u8> = "wörld €".encode_utf16().flat_map(u16::to_le_bytes).collect();
    p.field("s16", STR16_16, 0).data(&7u16.to_le_bytes()).data(&utf16);
    let utf32: Vec<u8> = "a😀".chars().flat_map(|c| (c as u32).to_le_bytes()).chain([0; 4]).collect();
    p.field("z32", ZSTR32, 0).data(&utf32);
    p.field("json", STR16_8, STRING_JSON).data(&7u16.to_le_bytes()).data(b"{\"a\":1}");
    p.field("bin", BIN16, 0).data(&2u16.to_le_bytes()).data(&[0xde, 0xad]);
    // eventheader's `binary` type: counted 8-bit chars shown as hex bytes.
    p.field("blob", STR16_8, HEX_BYTES).data(&3u16.to_le_bytes()).data(&[1, 2, 0xff]);
    // struct pt { x: u32, inner { y: i8 } }: the struct's format byte is its field count.
    p.field("pt", STRUCT, 2).field("x", V32, 0).data(&7u32.to_le_bytes());
    p.field("inner", STRUCT, 1).field("y", V8, SIGNED).data(&[(-2i8) as u8]);
    // u16 arr[] = {1, 2, 3}, count in the data.
    p.field("arr", V16 | VARRAY, 0).data(&3u16.to_le_bytes()).data(&[1, 0, 2, 0, 3, 0]);
    // u8 two[2] = {9, 8}, count in the metadata.
    p.field("two", V8 | CARRAY, 0);
    p.meta.extend_from_slice(&2u16.to_le_bytes());
    p.data(&[9, 8]);
    // struct { u8 a; } pts[] = {{5}, {6}}.
    p.field("pts", STRUCT | VARRAY, 1).field("a", V8, 0).data(&2u16.to_le_bytes()).data(&[5, 6]);
    p
}

fn owned<'a>(fields: &'a [(Cow<'a, str>, FieldValue<'a>)]) -> Vec<(&'a str, &'a FieldValue<'a>)> {
    fields.iter().map(|(n, v)| (n.as_ref(), v)).collect()
}

/// A struct value of these members, in this order.
fn member_list(members: &[(&'static str, FieldValue<'static>)]) -> FieldValue<'static> {
    FieldValue::Struct(members.iter().map(|(n, v)| (Cow::Borrowed(*n), v.clone())).collect())
}

#[test]
fn every_encoding_and_format_reads_back_its_value() {
    let format = format();
    assert!(is_eventheader(&format));
    // Activity id then related activity id.
    let activity: Vec<u8> = (0x10u8..0x30).collect();
    // version 1, id 5, tag 0x107, opcode ActivityStart (1), level 4.
    let raw = every_type().raw([1, 5, 0, 0x07, 0x01, 1, 4], &activity);
    let fields = decode_eventheader(&format, &raw).unwrap();
    let s = |v: &str| FieldValue::Str(v.to_owned().into());
    let expected: Vec<(&str, FieldValue<'_>)> = vec![
        // An activity start: a span begin, its id the activity id's halves
        // XORed (0x1011121314151617 ^ 0x18191a1b1c1d1e1f).
        ("span_begin", FieldValue::Unsigned(0x0808_0808_0808_0808)),
        ("u8", FieldValue::Unsigned(200)),
        ("i16", FieldValue::Signed(-300)),
        ("u64", FieldValue::Unsigned(u64::MAX)),
        ("past63", FieldValue::Unsigned(9_223_372_036_854_775_813)),
        ("i64", FieldValue::Signed(i64::MIN)),
        ("hex", s("0xDEADBEEF")),
        ("errno", s("ENOENT(2)")),
        ("pid", FieldValue::Signed(1234)),
        ("time", s("1970-01-02T00:00:00Z")),
        ("yes", FieldValue::Bool(true)),
        ("odd_bool", s("BOOL(7)")),
        ("f32", FieldValue::F32(1.5)),
        ("f64", FieldValue::F64(-0.25)),
        ("u128", s("00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F")),
        ("uuid", s("12345678-9abc-def0-0102-030405060708")),
        ("ipv4", s("127.0.0.1")),
        ("port", FieldValue::Unsigned(8080)),
        ("ipv6", s("::1")),
        ("z8", s("héllo")),
        ("s16", s("wörld €")),
        ("z32", s("a😀")),
        ("json", s("{\"a\":1}")),
        ("bin", FieldValue::Bytes(&[0xde, 0xad])),
        ("blob", FieldValue::Bytes(&[1, 2, 0xff])),
        // Structs and arrays nest as the event nests them.
        ("pt", member_list(&[("x", FieldValue::Unsigned(7)), ("inner", member_list(&[("y", FieldValue::Signed(-2))]))])),
        ("arr", FieldValue::Array(vec![FieldValue::Unsigned(1), FieldValue::Unsigned(2), FieldValue::Unsigned(3)])),
        ("two", FieldValue::Array(vec![FieldValue::Unsigned(9), FieldValue::Unsigned(8)])),
        (
            "pts",
            FieldValue::Array(vec![member_list(&[("a", FieldValue::Unsigned(5))]), member_list(&[("a", FieldValue::Unsigned(6))])]),
        ),
        ("meta.provider", s("MyProvider")),
        ("meta.event", s("Every")),
        ("meta.id", FieldValue::Unsigned(5)),
        ("meta.version", FieldValue::Unsigned(1)),
        ("meta.level", FieldValue::Unsigned(4)),
        ("meta.keyword", FieldValue::Unsigned(1)),
        ("meta.opcode", FieldValue::Unsigned(1)),
        ("meta.tag", FieldValue::Unsigned(0x107)),
        ("meta.activity", s("10111213-1415-1617-1819-1a1b1c1d1e1f")),
        ("meta.relatedActivity", s("20212223-2425-2627-2829-2a2b2c2d2e2f")),
        ("meta.options", s("Gmygroup")),
        ("meta.flags", FieldValue::Unsigned(7)),
    ];
    let expected_refs: Vec<(&str, &FieldValue<'_>)> = expected.iter().map(|(n, v)| (*n, v)).collect();
    assert_eq!(owned(&fields), expected_refs);
    library_json::assert_same_as_library(&fields, &library_json::library_fields(&format, &raw));
}

#[test]
fn an_event_without_fields_has_only_its_meta() {
    let format = format();
    let raw = Payload::new("Empty").raw(PLAIN, &[]);
    let fields = decode_eventheader(&format, &raw).unwrap();
    let s = |v: &str| FieldValue::Str(v.to_owned().into());
    assert_eq!(
        owned(&fields),
        [
            ("meta.provider", &s("MyProvider")),
            ("meta.event", &s("Empty")),
            ("meta.level", &FieldValue::Unsigned(4)),
            ("meta.keyword", &FieldValue::Unsigned(1)),
            ("meta.options", &s("Gmygroup")),
            ("meta.flags", &FieldValue::Unsigned(7)),
        ]
    );
    library_json::assert_same_as_library(&fields, &library_json::library_fields(&format, &raw));
}

#[test]
fn plain_tracepoints_are_not_eventheader() {
    let plain = EventFormat::parse("user_events", crate::format::tests::ALL_TYPES).unwrap();
    assert!(!is_eventheader(&plain));
}

#[test]
fn a_counted_string_longer_than_the_data_is_an_error_at_its_place() {
    let format = format();
    let mut p = Payload::new("Cut");
    p.field("ok", V8, 0).data(&[1]);
    p.field("s", STR16_8, 0).data(&50u16.to_le_bytes()).data(b"short");
    let raw = p.raw(PLAIN, &[]);
    // The walk stops at the string's length word: after trace_entry (8),
    // header (8), extension header (4), metadata, and the one data byte.
    let at = 8 + 8 + 4 + p.meta.len() + 1;
    assert_eq!(
        decode_eventheader(&format, &raw),
        Err(DecodeError::EventHeader { error: EventHeaderError::InvalidData, at })
    );
}

#[test]
fn cut_metadata_and_unknown_encodings_are_errors() {
    let format = format();
    let mut p = Payload::new("Bad");
    p.field("x", V32, 0).data(&[1, 0, 0, 0]);
    let raw = p.raw(PLAIN, &[]);
    // The metadata extension claims more bytes than the record has.
    let mut cut = raw.clone();
    cut.truncate(8 + 8 + 4 + 3);
    assert!(matches!(decode_eventheader(&format, &cut), Err(DecodeError::EventHeader { .. })));
    // Encoding 31 is not one the format defines.
    let mut unknown = raw.clone();
    let enc = 8 + 8 + 4 + "Bad\0x\0".len();
    unknown[enc] = 31;
    assert!(matches!(
        decode_eventheader(&format, &unknown),
        Err(DecodeError::EventHeader { error: EventHeaderError::NotSupported | EventHeaderError::InvalidData, .. })
    ));
    // Unknown header flags, and a payload shorter than the header.
    let mut flags = raw.clone();
    flags[8] = 0x80;
    assert_eq!(
        decode_eventheader(&format, &flags),
        Err(DecodeError::EventHeader { error: EventHeaderError::NotSupported, at: 0 })
    );
    assert_eq!(
        decode_eventheader(&format, &raw[..12]),
        Err(DecodeError::EventHeader { error: EventHeaderError::InvalidParameter, at: 0 })
    );
    // Every prefix decodes or fails; none panics.
    for len in 0..raw.len() {
        let _ = decode_eventheader(&format, &raw[..len]);
    }
}

#[test]
fn a_tracepoint_name_without_level_and_keyword_is_not_supported() {
    let text = FORMAT.replace("MyProvider_L4K1Gmygroup", "MyProvider");
    let format = EventFormat::parse("user_events", &text).unwrap();
    let raw = Payload::new("E").raw(PLAIN, &[]);
    assert_eq!(
        decode_eventheader(&format, &raw),
        Err(DecodeError::EventHeader { error: EventHeaderError::NotSupported, at: 0 })
    );
}

#[test]
fn an_array_of_structs_without_fields_is_decoded_without_a_library_assertion() {
    // Found by the eventheader fuzz target: `x`, a constant-length array of
    // structs (encoding 0x21) with no format byte, i.e. of structs of no
    // field, which trips a debug_assert in tracepoint_decode's
    // PerfItemMetadata::new unless that crate is built without them (see
    // the workspace Cargo.toml).
    let text = FORMAT.replace("MyProvider_L4K1Gmygroup", "\u{1}\u{85}Provider_L4K1");
    let format = EventFormat::parse("user_events", &text).unwrap();
    let mut raw = vec![0u8; 8];
    raw.extend_from_slice(&[7, 1, 5, 0, 7, 1, 1, 4, 0x20, 0, 2, 0x80]);
    raw.extend(0x10u8..0x30);
    raw.extend_from_slice(&[0x16, 0, 1, 0]);
    raw.extend_from_slice(b"Ev\0n\0\x02s\0\x0a\x80pt\0\x81\x02x\0\x21y\0\x83\x40");
    raw.extend_from_slice(&[0x2a, 0x02, 0x00, 0x8b, 0x51, 0xff, 0xff, 0x4c, 0xff, 9, 9, 9, 9, 9, 9]);
    let fields = decode_eventheader(&format, &raw).unwrap();
    let s = |v: &str| FieldValue::Str(v.to_owned().into());
    assert_eq!(
        owned(&fields)[..5],
        [
            ("span_begin", &FieldValue::Unsigned(0x0808_0808_0808_0808)),
            ("n", &FieldValue::Unsigned(42)),
            // A counted string of 2 bytes, not UTF-8: read as Latin-1.
            ("s", &s("\u{8b}Q")),
            // `x`'s 121 structs have no field, so they read no byte; `y`,
            // with an unknown format (0x40), is its value in decimal, as text.
            ("\u{fffd}pt", &member_list(&[("x", FieldValue::Array(vec![member_list(&[]); 121])), ("y", s("65535"))])),
            ("meta.provider", &s("\u{1}\u{85}Provider")),
        ]
    );
}

#[test]
fn a_struct_of_no_fields_is_an_error() {
    let format = format();
    let mut p = Payload::new("S");
    // A struct's format byte is its field count; none at all means 0.
    p.field("s", STRUCT, 0).field("x", V8, 0).data(&[1]);
    let raw = p.raw(PLAIN, &[]);
    // Stops where the struct's data would start: trace_entry, header,
    // extension header and the metadata of `S`, `s` and `x`.
    assert_eq!(
        decode_eventheader(&format, &raw),
        Err(DecodeError::EventHeader { error: EventHeaderError::InvalidData, at: 8 + 8 + 4 + 8 })
    );
}

#[test]
fn an_activity_stop_ends_its_span_and_other_opcodes_or_no_activity_make_none() {
    let format = format();
    let mut activity = [0u8; 16];
    activity[15] = 5;
    // opcode 2 (ActivityStop) with the activity id only.
    let stop = Payload::new("Stop").raw([0, 0, 0, 0, 0, 2, 4], &activity);
    let fields = decode_eventheader(&format, &stop).unwrap();
    assert_eq!(fields[0], (Cow::Borrowed("span_end"), FieldValue::Unsigned(5)));
    library_json::assert_same_as_library(&fields, &library_json::library_fields(&format, &stop));
    // An id whose halves are equal folds to 0, which the timeline refuses: 1.
    assert_eq!(span_id(&[7; 16]), 1);
    // A start without an activity id, and an info event with one.
    for raw in [Payload::new("S").raw([0, 0, 0, 0, 0, 1, 4], &[]), Payload::new("I").raw(PLAIN, &activity)] {
        let fields = decode_eventheader(&format, &raw).unwrap();
        assert!(!fields.iter().any(|(n, _)| n.starts_with("span_")), "{fields:?}");
    }
}

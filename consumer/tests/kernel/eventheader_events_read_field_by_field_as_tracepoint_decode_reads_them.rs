//! EventHeader events written by Microsoft's own encoders (`eventheader`'s
//! static macros and `eventheader_dynamic`, in the `eventheader_producer`
//! example), selected with `PROVIDER:L<level>[K<keyword>]` before their
//! producer registers them (so the rescan must catch them): each decodes to
//! exactly the values written, and field by field to what
//! `tracepoint_decode`'s own JSON gives for the same raw bytes from our ring;
//! the activity's start and stop carry the timeline's span begin and end.

use std::borrow::Cow;

use usertrace_consumer::{Event, FieldValue, Session, SessionOptions};

use crate::consumer_support::*;
use crate::eventheader_support::*;

#[test]
fn eventheader_events_read_field_by_field_as_tracepoint_decode_reads_them() {
    let options = SessionOptions {
        patterns: vec!["UsertraceEhStatic:L4K1".into(), "UsertraceEhDynamic:L5K2".into()],
        ..SessionOptions::default()
    };
    let mut session = Session::open(&options).unwrap();
    let mut producer = start_producer(None);
    let rec = record_until_exit(&mut session, &mut producer.child);
    assert_eq!(rec.stats.lost_total(), 0);

    let got: Vec<(&str, String)> = rec.events.iter().map(|e| (e.name(), event_name(e))).collect();
    assert_eq!(
        got,
        [
            ("UsertraceEhStatic_L4K1", "Every".to_owned()),
            ("UsertraceEhStatic_L4K1", "Work".to_owned()),
            ("UsertraceEhStatic_L4K1", "Work".to_owned()),
            ("UsertraceEhDynamic_L5K2", "Dynamic".to_owned()),
        ]
    );
    for e in &rec.events {
        assert_eq!((e.pid, e.tid), (producer.pid, producer.pid));
        assert_eq!((&*e.comm, &*e.process), (PRODUCER_COMM, PRODUCER_COMM));
        let fields = e.fields().unwrap();
        library_json::assert_same_as_library(&fields, &library_json::library_fields(&e.format, &e.raw));
    }

    let s = |v: &str| FieldValue::Str(Cow::Owned(v.to_owned()));
    assert_fields(
        &rec.events[0],
        &[
            ("u8", FieldValue::Unsigned(200)),
            ("i8", FieldValue::Signed(-100)),
            ("u16", FieldValue::Unsigned(65_000)),
            ("i16", FieldValue::Signed(-30_000)),
            ("u32", FieldValue::Unsigned(4_000_000_000)),
            ("i32", FieldValue::Signed(-2_000_000_000)),
            ("u64", FieldValue::Unsigned(u64::MAX - 1)),
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
            ("guid", s("12345678-9abc-def0-0102-030405060708")),
            ("ipv4", s("127.0.0.1")),
            ("ipv6", s("::1")),
            ("port", FieldValue::Unsigned(8080)),
            ("c16", s("Z")),
            ("s8", s("héllo")),
            ("z8", s("zero-terminated")),
            ("s16", s("wörld €")),
            ("z16", s("wörld €")),
            ("s32", s("a😀")),
            ("z32", s("a😀")),
            ("json", s("{\"a\":1}")),
            ("bin", FieldValue::Bytes(&[0xde, 0xad])),
            // Arrays and structs nest as the producer wrote them.
            ("arr", FieldValue::Array(vec![FieldValue::Unsigned(1), FieldValue::Unsigned(2), FieldValue::Unsigned(3)])),
            ("neg", FieldValue::Array(vec![FieldValue::Signed(-1), FieldValue::Signed(-2)])),
            ("pt", part(&[("x", FieldValue::Unsigned(7)), ("inner", part(&[("y", FieldValue::Signed(-2)), ("name", s("wörld €"))]))])),
            ("meta.provider", s("UsertraceEhStatic")),
            ("meta.event", s("Every")),
            ("meta.id", FieldValue::Unsigned(5)),
            ("meta.version", FieldValue::Unsigned(1)),
            ("meta.level", FieldValue::Unsigned(4)),
            ("meta.keyword", FieldValue::Unsigned(1)),
            ("meta.tag", FieldValue::Unsigned(0x107)),
            ("meta.flags", FieldValue::Unsigned(7)),
        ],
    );
    assert_fields(
        &rec.events[1],
        &[
            // The activity's start begins a span; its id, the activity id's
            // halves XORed, is the stop's.
            ("span_begin", FieldValue::Unsigned(0x0808_0808_0808_0808)),
            ("what", s("compile")),
            ("meta.provider", s("UsertraceEhStatic")),
            ("meta.event", s("Work")),
            ("meta.level", FieldValue::Unsigned(4)),
            ("meta.keyword", FieldValue::Unsigned(1)),
            ("meta.opcode", FieldValue::Unsigned(1)),
            ("meta.activity", s("10111213-1415-1617-1819-1a1b1c1d1e1f")),
            ("meta.relatedActivity", s("20212223-2425-2627-2829-2a2b2c2d2e2f")),
            ("meta.flags", FieldValue::Unsigned(7)),
        ],
    );
    assert_fields(
        &rec.events[2],
        &[
            ("span_end", FieldValue::Unsigned(0x0808_0808_0808_0808)),
            ("status", FieldValue::Unsigned(0)),
            ("meta.provider", s("UsertraceEhStatic")),
            ("meta.event", s("Work")),
            ("meta.level", FieldValue::Unsigned(4)),
            ("meta.keyword", FieldValue::Unsigned(1)),
            ("meta.opcode", FieldValue::Unsigned(2)),
            ("meta.activity", s("10111213-1415-1617-1819-1a1b1c1d1e1f")),
            ("meta.flags", FieldValue::Unsigned(7)),
        ],
    );
    assert_fields(
        &rec.events[3],
        &[
            ("big", FieldValue::Unsigned(u64::MAX)),
            ("signed", FieldValue::Signed(-5)),
            // A 128-bit value, which no integer type holds: its bytes, as
            // the library prints them.
            ("v128", s("00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F")),
            ("wide", s("grüße")),
            ("names", FieldValue::Array(vec![s("alpha"), s("beta")])),
            ("floats", FieldValue::Array(vec![FieldValue::F64(0.5), FieldValue::F64(-1.0)])),
            ("outer", part(&[("a", FieldValue::Unsigned(1)), ("deep", part(&[("leaf", s("end"))]))])),
            ("meta.provider", s("UsertraceEhDynamic")),
            ("meta.event", s("Dynamic")),
            ("meta.id", FieldValue::Unsigned(9)),
            ("meta.version", FieldValue::Unsigned(2)),
            ("meta.level", FieldValue::Unsigned(5)),
            ("meta.keyword", FieldValue::Unsigned(2)),
            ("meta.tag", FieldValue::Unsigned(0x22)),
            ("meta.flags", FieldValue::Unsigned(7)),
        ],
    );
}

/// A struct of these members, in this order.
fn part(members: &[(&'static str, FieldValue<'static>)]) -> FieldValue<'static> {
    FieldValue::Struct(members.iter().map(|(n, v)| (Cow::Borrowed(*n), v.clone())).collect())
}

/// Exactly these fields, in this order.
fn assert_fields(event: &Event, expected: &[(&str, FieldValue<'_>)]) {
    let fields = event.fields().unwrap();
    let got: Vec<(&str, &FieldValue<'_>)> = fields.iter().map(|(n, v)| (n.as_ref(), v)).collect();
    let expected: Vec<(&str, &FieldValue<'_>)> = expected.iter().map(|(n, v)| (*n, v)).collect();
    assert_eq!(got, expected);
}

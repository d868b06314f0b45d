//! The format text the core builds for a shared-memory descriptor reads,
//! through the consumer's own tracefs parser, as the layout the producer
//! writes: every type at its packed offset, with its size and kind.

use usertrace::descriptor::{parse_descriptor, tracefs_format};
use usertrace::{format_string, Field, FieldType};
use usertrace_consumer::{EventFormat, FieldKind};

fn parsed(fields: &[Field]) -> Vec<(String, usize, usize, FieldKind)> {
    let text = tracefs_format("user_events", "ut_desc", 4242, fields);
    let format = EventFormat::parse("user_events", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!((format.name.as_str(), format.id, format.full_name().as_str()), ("ut_desc", 4242, "user_events:ut_desc"));
    format.fields.into_iter().map(|f| (f.name, f.offset, f.size, f.kind)).collect()
}

#[test]
fn every_type_reads_back_with_its_offset_size_and_kind() {
    let fields = [
        Field::new("a", FieldType::U8),
        Field::new("b", FieldType::U16),
        Field::new("c", FieldType::U32),
        Field::new("d", FieldType::U64),
        Field::new("e", FieldType::I8),
        Field::new("f", FieldType::I16),
        Field::new("g", FieldType::I32),
        Field::new("h", FieldType::I64),
        Field::new("ok", FieldType::Bool),
        Field::new("x", FieldType::F32),
        Field::new("y", FieldType::F64),
        Field::new("c16", FieldType::CharArray(16)),
        Field::new("s", FieldType::Str),
        Field::new("bytes", FieldType::Bytes),
    ];
    let unsigned = FieldKind::Int { signed: false };
    let signed = FieldKind::Int { signed: true };
    let expected = [
        ("a", 8, 1, unsigned),
        ("b", 9, 2, unsigned),
        ("c", 11, 4, unsigned),
        ("d", 15, 8, unsigned),
        ("e", 23, 1, signed),
        ("f", 24, 2, signed),
        ("g", 26, 4, signed),
        ("h", 30, 8, signed),
        ("ok", 38, 1, FieldKind::Bool),
        ("x", 39, 4, FieldKind::F32),
        ("y", 43, 8, FieldKind::F64),
        ("c16", 51, 16, FieldKind::CharArray),
        ("s", 67, 4, FieldKind::LocStr { relative: true }),
        ("bytes", 71, 4, FieldKind::LocBytes { relative: true }),
    ];
    let got = parsed(&fields);
    let got: Vec<(&str, usize, usize, FieldKind)> = got.iter().map(|(n, o, s, k)| (n.as_str(), *o, *s, *k)).collect();
    assert_eq!(got, expected);
}

#[test]
fn each_type_alone_starts_right_after_the_trace_entry() {
    for (code, _) in FieldType::TABLE {
        let ty = FieldType::from_code(code, 1024).unwrap();
        let got = parsed(&[Field::new("v", ty)]);
        assert_eq!(got.len(), 1, "{ty:?}");
        assert_eq!((got[0].1, got[0].2), (8, ty.fixed_size()), "{ty:?}");
    }
}

#[test]
fn a_descriptor_from_shared_memory_becomes_the_format_the_producer_writes_to() {
    let fields = vec![
        Field::new("a", FieldType::U32),
        Field::new("b", FieldType::Str),
        Field::new("c", FieldType::CharArray(16)),
        Field::new("x", FieldType::F32),
        Field::new("ok", FieldType::Bool),
        Field::new("n", FieldType::I64),
    ];
    let descriptor = format_string("name", &fields).unwrap();
    assert_eq!(descriptor, "name u32 a;__rel_loc char[] b;char[16] c;struct f32 x 4;unsigned char ok;s64 n");
    let (name, read) = parse_descriptor(&descriptor).unwrap();
    assert_eq!((name.as_str(), &read), ("name", &fields));
    let text = tracefs_format("user_events", &name, 9, &read);
    let format = EventFormat::parse("user_events", &text).unwrap();
    let layout: Vec<(&str, usize, usize)> = format.fields.iter().map(|f| (f.name.as_str(), f.offset, f.size)).collect();
    assert_eq!(layout, [("a", 8, 4), ("b", 12, 4), ("c", 16, 16), ("x", 32, 4), ("ok", 36, 1), ("n", 37, 8)]);
}

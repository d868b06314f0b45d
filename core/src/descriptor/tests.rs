use super::*;
use crate::producer::format_string;

/// One field of every type, under the names the guest fixture uses.
fn every_type() -> Vec<Field> {
    vec![
        Field::new("u8v", FieldType::U8),
        Field::new("u16v", FieldType::U16),
        Field::new("u32v", FieldType::U32),
        Field::new("u64v", FieldType::U64),
        Field::new("i8v", FieldType::I8),
        Field::new("i16v", FieldType::I16),
        Field::new("i32v", FieldType::I32),
        Field::new("i64v", FieldType::I64),
        Field::new("flag", FieldType::Bool),
        Field::new("f32v", FieldType::F32),
        Field::new("f64v", FieldType::F64),
        Field::new("arr", FieldType::CharArray(8)),
        Field::new("msg", FieldType::Str),
        Field::new("blob", FieldType::Bytes),
    ]
}

fn round_trip(event: &str, fields: &[Field]) {
    let text = format_string(event, fields).unwrap();
    let (name, parsed) = parse_descriptor(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!((name.as_str(), parsed.as_slice()), (event, fields), "{text:?}");
}

#[test]
fn every_type_alone_reads_back_as_itself() {
    for (code, _) in FieldType::TABLE {
        for len in [1, 16, 1024] {
            let ty = FieldType::from_code(code, len).unwrap();
            round_trip("ev", &[Field::new("x", ty)]);
        }
    }
}

#[test]
fn multi_field_events_read_back_in_order() {
    round_trip("ping", &[]);
    round_trip("ut_all", &every_type());
    let mut reversed = every_type();
    reversed.reverse();
    round_trip("ut_rev", &reversed);
    round_trip(
        "name",
        &[
            Field::new("a", FieldType::U32),
            Field::new("b", FieldType::Str),
            Field::new("c", FieldType::CharArray(16)),
            Field::new("x", FieldType::F32),
            Field::new("ok", FieldType::Bool),
            Field::new("n", FieldType::I64),
        ],
    );
    let most: Vec<Field> = (0..MAX_FIELDS).map(|i| Field::owned(format!("f{i}"), FieldType::CharArray(1 + i as u16))).collect();
    round_trip("E_1", &most);
}

#[test]
fn the_brief_example_reads_as_its_fields() {
    let (name, fields) = parse_descriptor("name u32 a;__rel_loc char[] b;char[16] c;struct f32 x 4;unsigned char ok;s64 n").unwrap();
    assert_eq!(name, "name");
    let types: Vec<(&str, FieldType)> = fields.iter().map(|f| (&*f.name, f.ty)).collect();
    assert_eq!(
        types,
        [
            ("a", FieldType::U32),
            ("b", FieldType::Str),
            ("c", FieldType::CharArray(16)),
            ("x", FieldType::F32),
            ("ok", FieldType::Bool),
            ("n", FieldType::I64)
        ]
    );
}

/// xorshift64*: reproducible, and no dependency for one test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn name(&mut self) -> String {
        // Mostly valid characters; now and then one format_string refuses.
        const CHARS: &[u8] = b"abcXYZ019_____ ;:[]-";
        let len = 1 + self.below(12) as usize;
        let valid = CHARS.len() - 6;
        let pool = if self.below(8) == 0 { CHARS.len() } else { valid };
        (0..len).map(|_| CHARS[self.below(pool as u64) as usize] as char).collect()
    }
}

#[test]
fn whatever_format_string_accepts_reads_back_the_same() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..20_000 {
        let event = rng.name();
        let count = rng.below(MAX_FIELDS as u64 + 3) as usize;
        let fields: Vec<Field> = (0..count)
            .map(|_| {
                let code = 1 + rng.below(14) as u32;
                let len = match rng.below(4) {
                    0 => 0,
                    1 => 1025,
                    _ => 1 + rng.below(1024) as u32,
                };
                Field::owned(rng.name(), FieldType::from_code(code, len).unwrap())
            })
            .collect();
        match format_string(&event, &fields) {
            Ok(text) => {
                accepted += 1;
                assert_eq!(parse_descriptor(&text), Ok((event, fields)), "{text:?}");
            }
            Err(_) => refused += 1,
        }
    }
    // Both sides of the rule were exercised.
    assert!(accepted > 1000 && refused > 1000, "{accepted} accepted, {refused} refused");
}

#[test]
fn what_format_string_would_not_write_is_refused_with_its_place() {
    use DescriptorError as E;
    let long = format!("ev {}", (0..20).map(|i| format!("__rel_loc char[] field_with_a_long_name_{i:02}")).collect::<Vec<_>>().join(";"));
    let many = format!("ev {}", (0..=MAX_FIELDS).map(|i| format!("u8 f{i}")).collect::<Vec<_>>().join(";"));
    let cases: Vec<(&str, E)> = vec![
        ("", E::InvalidEventName { name: "".into() }),
        (" u8 a", E::InvalidEventName { name: "".into() }),
        ("a:b u8 x", E::InvalidEventName { name: "a:b".into() }),
        ("ünï", E::InvalidEventName { name: "ünï".into() }),
        ("ev ", E::EmptyField { index: 0 }),
        ("ev u8 a;", E::EmptyField { index: 1 }),
        ("ev u8 a;;u8 b", E::EmptyField { index: 1 }),
        ("ev  u8 a", E::UnknownType { index: 0, declaration: " u8 a".into() }),
        ("ev u8 a; u8 b", E::UnknownType { index: 1, declaration: " u8 b".into() }),
        ("ev u8 a;int b", E::UnknownType { index: 1, declaration: "int b".into() }),
        ("ev i8 a", E::UnknownType { index: 0, declaration: "i8 a".into() }),
        ("ev bool a", E::UnknownType { index: 0, declaration: "bool a".into() }),
        ("ev u8", E::UnknownType { index: 0, declaration: "u8".into() }),
        ("ev struct f32 x", E::UnknownType { index: 0, declaration: "struct f32 x".into() }),
        ("ev struct f32 x 8", E::UnknownType { index: 0, declaration: "struct f32 x 8".into() }),
        ("ev struct f64 x 4", E::UnknownType { index: 0, declaration: "struct f64 x 4".into() }),
        ("ev struct point p 12", E::UnknownType { index: 0, declaration: "struct point p 12".into() }),
        ("ev __data_loc char[] s", E::UnknownType { index: 0, declaration: "__data_loc char[] s".into() }),
        ("ev __rel_loc char s", E::UnknownType { index: 0, declaration: "__rel_loc char s".into() }),
        ("ev char[16]c", E::UnknownType { index: 0, declaration: "char[16]c".into() }),
        ("ev char[0] c", E::BadCharArrayLength { index: 0, len: "0".into() }),
        ("ev char[1025] c", E::BadCharArrayLength { index: 0, len: "1025".into() }),
        ("ev char[016] c", E::BadCharArrayLength { index: 0, len: "016".into() }),
        ("ev char[+16] c", E::BadCharArrayLength { index: 0, len: "+16".into() }),
        ("ev char[] c", E::BadCharArrayLength { index: 0, len: "".into() }),
        ("ev char[99999999999999999999] c", E::BadCharArrayLength { index: 0, len: "99999999999999999999".into() }),
        ("ev u8 a b", E::InvalidFieldName { index: 0, name: "a b".into() }),
        ("ev u8 a;u16 a-b", E::InvalidFieldName { index: 1, name: "a-b".into() }),
        ("ev struct f32 a b 4", E::InvalidFieldName { index: 0, name: "a b".into() }),
        ("ev u8 ", E::InvalidFieldName { index: 0, name: "".into() }),
        ("ev u8 x;u16 x", E::DuplicateField { index: 1, name: "x".into() }),
        (&long, E::TooLong { len: long.len(), max: 511 }),
        (&many, E::TooManyFields { count: 33, max: 32 }),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_descriptor(text), Err(expected), "{text:?}");
    }
}

#[test]
fn errors_quote_little_of_a_hostile_text_and_say_where() {
    let junk = format!("ev u8 a;{}", "x".repeat(400));
    let err = parse_descriptor(&junk).unwrap_err();
    assert_eq!(err, DescriptorError::UnknownType { index: 1, declaration: format!("{}...", "x".repeat(32)) });
    assert_eq!(
        err.to_string(),
        format!("event descriptor: field 1 (\"{}...\") is not a declaration of any field type", "x".repeat(32))
    );
    let err = parse_descriptor("ev u8 x;u16 x").unwrap_err();
    assert_eq!(err.to_string(), "event descriptor: field 1 is named x, as an earlier field is");
    let wide = format!("{} u8 a", "é".repeat(100));
    let err = parse_descriptor(&wide).unwrap_err();
    assert_eq!(err, DescriptorError::InvalidEventName { name: format!("{}...", "é".repeat(32)) });
    let _: &dyn std::error::Error = &err;
}

#[test]
fn any_prefix_or_byte_change_of_a_descriptor_parses_or_errs() {
    let text = format_string("ut_all", &every_type()).unwrap();
    for end in 0..=text.len() {
        if let Ok((name, fields)) = parse_descriptor(&text[..end]) {
            assert_eq!(format_string(&name, &fields).unwrap(), &text[..end]);
        }
    }
    let bytes = text.as_bytes();
    for i in 0..bytes.len() {
        for b in [b' ', b';', b'[', b']', b'0', b'9', b'u', b'_', b'x', 0] {
            let mut changed = bytes.to_vec();
            changed[i] = b;
            let changed = String::from_utf8(changed).unwrap();
            if let Ok((name, fields)) = parse_descriptor(&changed) {
                assert_eq!(format_string(&name, &fields).unwrap(), changed);
            }
        }
    }
}

/// `ut_fix_all` as tracefs showed it in the 6.12.117 guest, copied from
/// the format text in cli/tests/fixtures/archive.data.
const GUEST_UT_FIX_ALL: &str = "name: ut_fix_all\nID: 600\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\n\
\tfield:u8 u8v;\toffset:8;\tsize:1;\tsigned:0;\n\
\tfield:u16 u16v;\toffset:9;\tsize:2;\tsigned:0;\n\
\tfield:u32 u32v;\toffset:11;\tsize:4;\tsigned:0;\n\
\tfield:u64 u64v;\toffset:15;\tsize:8;\tsigned:0;\n\
\tfield:s8 i8v;\toffset:23;\tsize:1;\tsigned:1;\n\
\tfield:s16 i16v;\toffset:24;\tsize:2;\tsigned:1;\n\
\tfield:s32 i32v;\toffset:26;\tsize:4;\tsigned:1;\n\
\tfield:s64 i64v;\toffset:30;\tsize:8;\tsigned:1;\n\
\tfield:unsigned char flag;\toffset:38;\tsize:1;\tsigned:0;\n\
\tfield:struct f32 f32v;\toffset:39;\tsize:4;\tsigned:1;\n\
\tfield:struct f64 f64v;\toffset:43;\tsize:8;\tsigned:1;\n\
\tfield:char arr[];\toffset:51;\tsize:8;\tsigned:1;\n\
\tfield:__rel_loc char msg[];\toffset:59;\tsize:4;\tsigned:1;\n\
\tfield:__rel_loc u8 blob[];\toffset:63;\tsize:4;\tsigned:1;\n\
\n\
print fmt: \"u8v=%u u16v=%u u32v=%u u64v=%llu i8v=%d i16v=%d i32v=%d i64v=%lld flag=%u f32v=%llu f64v=%llu \
arr=%s msg=%s blob=%llu\", REC->u8v, REC->u16v, REC->u32v, REC->u64v, REC->i8v, REC->i16v, REC->i32v, \
REC->i64v, REC->flag, REC->f32v, REC->f64v, REC->arr, __get_rel_str(msg), REC->blob\n";

#[test]
fn the_format_text_is_what_the_guest_kernel_showed_for_every_type() {
    assert_eq!(tracefs_format("user_events", "ut_fix_all", 600, &every_type()), GUEST_UT_FIX_ALL);
}

#[test]
fn the_guest_fixture_holds_the_same_text() {
    // The constant above is checked against the recording itself, so the
    // two cannot drift apart.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../cli/tests/fixtures/archive.data");
    let data = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&data);
    assert!(text.contains(GUEST_UT_FIX_ALL), "{path} has no ut_fix_all format as recorded");
    let renamed = "name: ut_fix_ren\nID: 601\nformat:\n".to_owned()
        + COMMON_FIELDS
        + "\tfield:u32 stage;\toffset:8;\tsize:4;\tsigned:0;\n\
           \tfield:__rel_loc char note[];\toffset:12;\tsize:4;\tsigned:1;\n\n\
           print fmt: \"stage=%u note=%s\", REC->stage, __get_rel_str(note)\n";
    assert!(text.contains(&renamed), "{path} has no ut_fix_ren format as recorded");
    let fields = [Field::new("stage", FieldType::U32), Field::new("note", FieldType::Str)];
    assert_eq!(tracefs_format("user_events", "ut_fix_ren", 601, &fields), renamed);
}

#[test]
fn an_event_without_fields_has_an_empty_print_fmt() {
    assert_eq!(tracefs_format("user_events", "ping", 7, &[]), format!("name: ping\nID: 7\nformat:\n{COMMON_FIELDS}\nprint fmt: \"\"\n"));
}

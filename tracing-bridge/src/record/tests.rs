use tracing_core::callsite::Callsite;
use tracing_core::field::{FieldSet, Value as _};
use tracing_core::subscriber::Interest;
use tracing_core::{identify_callsite, Metadata};
use usertrace::{FieldType, Value};

use super::*;

struct Nowhere;
impl Callsite for Nowhere {
    fn set_interest(&self, _: Interest) {}
    fn metadata(&self) -> &Metadata<'_> {
        unreachable!("only the identity is used")
    }
}
static NOWHERE: Nowhere = Nowhere;
static NAMES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

fn fields() -> FieldSet {
    FieldSet::new(&NAMES, identify_callsite!(&NOWHERE))
}

/// Records `value` as field `i` of a fresh scratch.
fn recorded(i: usize, value: &dyn tracing_core::field::Value) -> Scratch {
    let set = fields();
    let field = set.iter().nth(i).unwrap();
    let mut scratch = Scratch::default();
    value.record(&field, &mut scratch.visitor());
    scratch
}

#[test]
fn each_kind_of_value_has_its_field_type() {
    let cases: [(&dyn tracing_core::field::Value, FieldType); 12] = [
        (&42u8, FieldType::U64),
        (&42u64, FieldType::U64),
        (&usize::MAX, FieldType::U64),
        (&-3i32, FieldType::I64),
        (&1.5f32, FieldType::F64),
        (&true, FieldType::Bool),
        (&"x", FieldType::Str),
        (&String::from("x"), FieldType::Str),
        (&u128::MAX, FieldType::Str),
        (&-1i128, FieldType::Str),
        (&tracing_core::field::debug(vec![1]), FieldType::Str),
        (&format_args!("m {}", 1), FieldType::Str),
    ];
    for (value, ty) in cases {
        let scratch = recorded(0, value);
        assert_eq!(scratch.slots[0].field_type(), ty, "{:?}", scratch.slots[0]);
    }
    assert_eq!(recorded(0, &&b"ab"[..]).slots[0].field_type(), FieldType::Bytes);
    assert_eq!(Slot::Absent.field_type(), FieldType::Str, "a field first seen without a value is a string");
}

#[test]
fn text_is_what_display_and_debug_write() {
    let mut s = recorded(0, &tracing_core::field::display("shown"));
    assert_eq!(s.value(0, FieldType::Str), Some(Value::Str("shown")));
    s = recorded(1, &tracing_core::field::debug("quoted"));
    assert_eq!(s.value(1, FieldType::Str), Some(Value::Str("\"quoted\"")));
    s = recorded(2, &format_args!("hello {}", 42));
    assert_eq!(s.value(2, FieldType::Str), Some(Value::Str("hello 42")));
    s = recorded(3, &u128::MAX);
    assert_eq!(s.value(3, FieldType::Str), Some(Value::Str("340282366920938463463374607431768211455")));
    let err = std::io::Error::other("disk full");
    s = recorded(4, &(&err as &(dyn std::error::Error + 'static)));
    assert_eq!(s.value(4, FieldType::Str), Some(Value::Str("disk full")));
}

#[test]
fn a_value_converts_to_the_registered_type_only_when_exact() {
    let s = recorded(0, &7i64);
    assert_eq!(s.value(0, FieldType::U64), Some(Value::U64(7)));
    assert_eq!(s.value(0, FieldType::F64), Some(Value::F64(7.0)));
    assert_eq!(recorded(0, &-7i64).value(0, FieldType::U64), None);
    assert_eq!(recorded(0, &u64::MAX).value(0, FieldType::I64), None);
    assert_eq!(recorded(0, &(i64::MAX as u64)).value(0, FieldType::I64), Some(Value::I64(i64::MAX)));
    assert_eq!(recorded(0, &(1u64 << 53)).value(0, FieldType::F64), Some(Value::F64(9_007_199_254_740_992.0)));
    assert_eq!(recorded(0, &((1u64 << 53) + 1)).value(0, FieldType::F64), None, "not exact in f64");
    assert_eq!(recorded(0, &1.5f64).value(0, FieldType::U64), None);
    assert_eq!(recorded(0, &"7").value(0, FieldType::U64), None);
    assert_eq!(recorded(0, &1u64).value(0, FieldType::Bool), None);
    assert_eq!(recorded(0, &true).value(0, FieldType::U64), None);
}

#[test]
fn anything_fits_a_string_field_as_its_text() {
    let cases: [(&dyn tracing_core::field::Value, &str); 7] = [
        (&42u64, "42"),
        (&-42i64, "-42"),
        (&0.1f64, "0.1"),
        (&1e300f64, "1e300"),
        (&1.0f64, "1.0"),
        (&false, "false"),
        (&&b"\xde\xad"[..], "dead"),
    ];
    for (value, text) in cases {
        let mut s = recorded(0, value);
        assert!(s.fits(&[0], &[FieldType::Str]));
        s.make_text(0);
        assert_eq!(s.value(0, FieldType::Str), Some(Value::Str(text)));
    }
}

#[test]
fn a_field_without_a_value_is_written_as_zero() {
    let s = Scratch::default();
    assert_eq!(s.value(0, FieldType::U64), Some(Value::U64(0)));
    assert_eq!(s.value(0, FieldType::I64), Some(Value::I64(0)));
    assert_eq!(s.value(0, FieldType::F64), Some(Value::F64(0.0)));
    assert_eq!(s.value(0, FieldType::Bool), Some(Value::Bool(false)));
    assert_eq!(s.value(0, FieldType::Str), Some(Value::Str("")));
    assert_eq!(s.value(0, FieldType::Bytes), Some(Value::Bytes(&[])));
}

#[test]
fn fits_says_whether_a_record_needs_the_text_twin() {
    let set = fields();
    let mut s = Scratch::default();
    let mut it = set.iter();
    1u64.record(&it.next().unwrap(), &mut s.visitor());
    "x".record(&it.next().unwrap(), &mut s.visitor());
    let types = [FieldType::U64, FieldType::Str, FieldType::Bool];
    assert!(s.fits(&[0, 1, 2], &types), "an absent bool is false");
    assert!(!s.fits(&[1, 0], &[FieldType::U64, FieldType::Str]), "text in a u64 field");
}

#[test]
fn a_nul_in_text_becomes_backslash_zero() {
    let s = recorded(0, &"a\0b\0");
    assert_eq!(s.value(0, FieldType::Str), Some(Value::Str(r"a\0b\0")));
    let s = recorded(0, &tracing_core::field::display("\0"));
    assert_eq!(s.value(0, FieldType::Str), Some(Value::Str(r"\0")));
}

#[test]
fn a_value_s_text_stops_at_one_event_s_worth() {
    struct Endless;
    impl std::fmt::Debug for Endless {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            loop {
                f.write_str("é")?;
            }
        }
    }
    let s = recorded(0, &tracing_core::field::debug(Endless));
    let Some(Value::Str(text)) = s.value(0, FieldType::Str) else { panic!() };
    assert!(text.len() <= MAX_PAYLOAD_LEN && text.len() >= MAX_PAYLOAD_LEN - 1, "{}", text.len());
}

#[test]
fn a_record_whose_debug_logs_gets_a_scratch_of_its_own() {
    let outer = Scratch::with(|s| {
        s.text.push_str("outer");
        let inner = Scratch::with(|t| {
            assert!(t.text.is_empty(), "not the outer record's scratch");
            t.text.push_str("inner");
            t.text.clone()
        });
        (s.text.clone(), inner)
    });
    assert_eq!(outer, ("outer".to_owned(), "inner".to_owned()));
    Scratch::with(|s| assert!(s.text.is_empty(), "emptied for the next record"));
}

use usertrace::{DynamicTracepoint, Error, ErrorKind, Field, FieldType, RegisterOptions};

use crate::support::unique_name;

#[test]
fn the_same_name_with_other_fields_is_a_clear_error_naming_both_formats() {
    let name = unique_name("mismatch");
    let first = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U32)], RegisterOptions::default()).unwrap();
    first.register().unwrap();

    let same = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U32)], RegisterOptions::default()).unwrap();
    same.register().expect("the same fields share the event");

    let other = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U64)], RegisterOptions::default()).unwrap();
    let err = other.register().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::FieldsMismatch);
    match &err {
        Error::FieldsMismatch { ours, registered, .. } => {
            assert_eq!(ours, &format!("{name} u64 x"));
            assert_eq!(registered.as_deref(), Some(format!("{name} u32 x").as_str()));
        }
        other => panic!("unexpected {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains(&format!("{name} u32 x")) && msg.contains(&format!("{name} u64 x")), "{msg}");
    assert!(!other.is_registered());
}

#[test]
fn names_the_kernel_would_misread_are_refused_before_registration() {
    for bad in ["has:colon", "has space", "semi;colon", ""] {
        let err = DynamicTracepoint::new(bad, vec![], RegisterOptions::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidName, "{bad:?}");
    }
}

//! One event with every field type arrives decoded, with the pid, tid and
//! command name of the process that emitted it (started before recording).

use usertrace_consumer::{FieldValue, Session};

use crate::consumer_support::*;

#[test]
fn a_session_decodes_every_field_type_with_its_emitter() {
    let name = unique("all");
    let mut producer = start(&["all", &name]);
    let mut session = Session::open(&options(&name)).unwrap();
    let rec = record_until_exit(&mut session, &mut producer.child);

    assert_eq!(rec.events.len(), 1, "{:?}", rec.outputs);
    let e = &rec.events[0];
    assert_eq!((e.pid, e.tid), (producer.pid, producer.pid));
    assert_eq!((&*e.comm, &*e.process), ("ut_emit", "ut_emit"));
    assert_eq!(e.name(), name);
    let fields: Vec<_> = e.fields().unwrap().into_iter().map(|(name, value)| (name.into_owned(), value)).collect();
    let expected = vec![
        ("u8v", FieldValue::Unsigned(250)),
        ("u16v", FieldValue::Unsigned(65_000)),
        ("u32v", FieldValue::Unsigned(4_000_000_000)),
        ("u64v", FieldValue::Unsigned(u64::MAX - 1)),
        ("i8v", FieldValue::Signed(-100)),
        ("i16v", FieldValue::Signed(-30_000)),
        ("i32v", FieldValue::Signed(-2_000_000_000)),
        ("i64v", FieldValue::Signed(i64::MIN + 1)),
        ("flag", FieldValue::Bool(true)),
        ("f32v", FieldValue::F32(1.5)),
        ("f64v", FieldValue::F64(-2.25)),
        ("arr", FieldValue::Str("abc".into())),
        ("msg", FieldValue::Str("héllo wörld".into())),
        ("blob", FieldValue::Bytes(&[0xde, 0xad, 0xbe, 0xef])),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect::<Vec<_>>();
    assert_eq!(fields, expected);
    assert_eq!(rec.stats.lost_total(), 0);
}

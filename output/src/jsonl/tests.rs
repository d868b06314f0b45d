use std::io::Cursor;

use super::*;
use crate::record::{EventRecord, Namespaces, Record, Value};
use crate::test_records::*;

fn lines(records: &[Record]) -> String {
    let mut out = Vec::new();
    for r in records {
        write_record(r, &mut out);
    }
    String::from_utf8(out).unwrap()
}

fn read(text: &str) -> Result<Vec<Record>, ReadError> {
    Reader::new(Cursor::new(text.as_bytes())).collect()
}

/// What a value reads back as: the line does not say a field's type.
fn as_read(v: &Value) -> Value {
    match v {
        // Written as the shortest decimal of the f32, read as an f64.
        Value::F32(f) if f.is_finite() => as_read(&Value::F64(f.to_string().parse().unwrap_or(f64::NAN))),
        Value::F32(f) => as_read(&Value::F64(f64::from(*f))),
        Value::F64(f) if !f.is_finite() => Value::Str(f.to_string()),
        Value::F64(f) if f.fract() == 0.0 && f.abs() < 1e15 && !(*f == 0.0 && f.is_sign_negative()) => {
            if *f < 0.0 {
                Value::Signed(*f as i64)
            } else {
                Value::Unsigned(*f as u64)
            }
        }
        Value::Bytes(_) => Value::Str(v.to_string()),
        Value::Array(items) => Value::Array(items.iter().map(as_read).collect()),
        Value::Struct(members) => Value::Struct(members.iter().map(|(n, v)| (n.clone(), as_read(v))).collect()),
        other => other.clone(),
    }
}

#[test]
fn every_line_kind_round_trips() {
    let mut records = mixed();
    records.push(Record::Lost(crate::record::LostRecord { time_ns: 80, cpu: 2, count: 1, sideband: true }));
    records.push(Record::Process(crate::record::ProcessRecord { time_ns: 90, pid: 5, executable: None, command_line: None, container_id: Some("ab".repeat(32)), pod_uid: None, pid_in_container: None, resource: Default::default() }));
    let back = read(&lines(&records)).unwrap();
    let expected: Vec<Record> = records
        .iter()
        .map(|r| match r {
            Record::Event(e) => Record::Event(EventRecord { fields: e.fields.iter().map(|(n, v)| (n.clone(), as_read(v))).collect(), ..e.clone() }),
            other => other.clone(),
        })
        .collect();
    assert_eq!(back, expected);
}

#[test]
fn values_at_every_edge_come_back_exactly() {
    let values = [
        Value::Unsigned(u64::MAX),
        Value::Unsigned((1 << 63) + 1),
        Value::Unsigned(1 << 53 | 1),
        Value::Signed(i64::MIN),
        Value::Signed(-1),
        Value::Bool(false),
        Value::F64(0.1),
        Value::F64(-2.25),
        Value::F64(1e-7),
        Value::F64(f64::MAX),
        Value::F64(f64::MIN_POSITIVE),
        Value::F64(-0.0),
        Value::F64(2.0),
        Value::F32(1.1),
        Value::F64(f64::NAN),
        Value::F64(f64::NEG_INFINITY),
        Value::Str("héllo \u{0}\u{1f}\u{7f}\u{2028}\"\\/ 🎉".into()),
        Value::Bytes(vec![0, 0xff, 0x10]),
    ];
    let fields: Vec<(&str, Value)> = values.iter().enumerate().map(|(i, v)| (["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r"][i], v.clone())).collect();
    let mut record = event(u64::MAX, u32::MAX, 1, "edge", &fields);
    if let Record::Event(e) = &mut record {
        e.namespaces = Some(Namespaces { net: u64::MAX, cgroup: 4026531835, ..Namespaces::default() });
        e.comm = "tab\there".into();
    }
    let back = read(&lines(&[record.clone()])).unwrap();
    let Record::Event(e) = &back[0] else { panic!("{back:?}") };
    let Record::Event(orig) = &record else { unreachable!() };
    assert_eq!((e.time_ns, e.pid, e.comm.as_str(), e.namespaces), (u64::MAX, u32::MAX, "tab\there", orig.namespaces));
    for ((name, got), (_, want)) in e.fields.iter().zip(&orig.fields) {
        match (got, as_read(want)) {
            // -0.0 == 0.0: compare the bits.
            (Value::F64(g), Value::F64(w)) => assert_eq!(g.to_bits(), w.to_bits(), "{name}"),
            (g, w) => assert_eq!(*g, w, "{name}"),
        }
    }
    assert_eq!(e.fields.len(), values.len());
}

#[test]
fn event_lines_keep_the_contracts_bytes_with_a_type_first() {
    let text = lines(&[event(12_345_678_901, 10, 11, "ping", &[("n", Value::Unsigned(12)), ("x", Value::F64(f64::NAN)), ("f", Value::F32(1.1))])]);
    assert_eq!(
        text,
        "{\"type\":\"event\",\"time_ns\":12345678901,\"cpu\":0,\"pid\":10,\"tid\":11,\"comm\":\"thread11\",\"process\":\"proc10\",\
         \"event\":\"ping\",\"fields\":{\"n\":12,\"x\":\"NaN\",\"f\":1.1}}\n"
    );
}

#[test]
fn an_eventheader_event_keeps_its_tracepoint_and_nested_values_and_reads_back() {
    let pt = Value::Struct(vec![("x".into(), Value::Signed(-7)), ("inner".into(), Value::Struct(vec![("name".into(), Value::Str("wörld".into()))]))]);
    let arr = Value::Array(vec![Value::Unsigned(1), Value::F32(1.5), Value::Array(vec![]), Value::Struct(vec![])]);
    let mut record = event(7, 1, 2, "Shop:Checkout", &[("arr", arr), ("pt", pt)]);
    if let Record::Event(e) = &mut record {
        e.tracepoint = Some("Shop_L4K1".into());
    }
    let text = lines(&[record.clone()]);
    assert_eq!(
        text,
        "{\"type\":\"event\",\"time_ns\":7,\"cpu\":0,\"pid\":1,\"tid\":2,\"comm\":\"thread2\",\"process\":\"proc1\",\
         \"event\":\"Shop:Checkout\",\"tracepoint\":\"Shop_L4K1\",\
         \"fields\":{\"arr\":[1,1.5,[],{}],\"pt\":{\"x\":-7,\"inner\":{\"name\":\"wörld\"}}}}\n"
    );
    let back = read(&text).unwrap();
    let Record::Event(orig) = record else { unreachable!() };
    let expected = EventRecord { fields: orig.fields.iter().map(|(n, v)| (n.clone(), as_read(v))).collect(), ..orig };
    assert_eq!(back, [Record::Event(expected)]);
}

#[test]
fn a_struct_flattened_by_an_older_version_reads_by_the_same_path() {
    // 0.1.0 wrote a struct's members as flat fields named `pt.x`.
    let back = read("{\"type\":\"event\",\"time_ns\":1,\"cpu\":0,\"pid\":1,\"tid\":1,\"comm\":\"c\",\"process\":\"p\",\"event\":\"e\",\"fields\":{\"pt.x\":7}}\n")
        .unwrap();
    let nested = read("{\"type\":\"event\",\"time_ns\":1,\"cpu\":0,\"pid\":1,\"tid\":1,\"comm\":\"c\",\"process\":\"p\",\"event\":\"e\",\"fields\":{\"pt\":{\"x\":7}}}\n")
        .unwrap();
    for records in [back, nested] {
        let [Record::Event(e)] = records.as_slice() else { panic!("{records:?}") };
        assert_eq!(e.field("pt.x"), Some(&Value::Unsigned(7)));
        assert_eq!(e.field("pt.y"), None);
        assert_eq!(e.tracepoint, None);
    }
}

#[test]
fn the_other_line_kinds_look_as_documented() {
    let mut contained = process(6, 7, "/app/srv", &["srv"]);
    if let Record::Process(p) = &mut contained {
        p.container_id = Some("0f".repeat(32));
        p.resource = [("service.name", "srv"), ("team", "a,b")].into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
    }
    let clock = Record::Clock(crate::record::ClockRecord { time_ns: 1, unix_ns: 1_764_556_800_000_000_000 });
    let text = lines(&[clock.clone(), process(1, 2, "/bin/sh", &["sh", "-c", "x"]), exit(3, 2, 4), lost(5, 1, 9), contained]);
    assert_eq!(
        text,
        "{\"type\":\"clock\",\"time_ns\":1,\"unix_ns\":1764556800000000000}\n\
         {\"type\":\"process\",\"time_ns\":1,\"pid\":2,\"executable\":\"/bin/sh\",\"command_line\":[\"sh\",\"-c\",\"x\"]}\n\
         {\"type\":\"exit\",\"time_ns\":3,\"pid\":2,\"tid\":4}\n\
         {\"type\":\"lost\",\"time_ns\":5,\"cpu\":1,\"count\":9,\"sideband\":false}\n\
         {\"type\":\"process\",\"time_ns\":6,\"pid\":7,\"executable\":\"/app/srv\",\"command_line\":[\"srv\"],\"container_id\":\"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f\",\
         \"resource\":{\"service.name\":\"srv\",\"team\":\"a,b\"}}\n"
    );
    let back: Vec<Record> = Reader::new(text.as_bytes()).collect::<Result<_, _>>().unwrap();
    assert_eq!(back[0], clock, "a clock line reads back exactly");
}

#[test]
fn lines_without_a_type_are_events_and_unknown_kinds_and_fields_are_skipped() {
    let text = "{\"time_ns\":1,\"cpu\":0,\"pid\":1,\"tid\":1,\"comm\":\"c\",\"process\":\"p\",\"event\":\"e\",\"fields\":{},\"new\":[1]}\n\
                \n\
                {\"type\":\"hologram\",\"time_ns\":2}\n\
                {\"type\":\"exit\",\"time_ns\":3,\"pid\":1,\"tid\":1}";
    let back = read(text).unwrap();
    assert_eq!(back.len(), 2);
    assert!(matches!(&back[0], Record::Event(e) if e.event == "e"));
    assert!(matches!(back[1], Record::Exit(_)));
}

#[test]
fn a_truncated_last_line_is_named_with_its_column() {
    let mut text = lines(&mixed());
    let full = text.lines().count();
    text.truncate(text.len() - 10);
    let e = read(&text).unwrap_err();
    assert_eq!(e.line(), Some(full as u64));
    let message = e.to_string();
    assert!(message.starts_with(&format!("line {full}: ")), "{message}");
    assert!(message.contains("at column") && message.contains("the file may be truncated"), "{message}");
}

#[test]
fn a_corrupt_line_in_the_middle_is_named_and_reading_stops() {
    let text = format!("{}{{\"type\":\"exit\",\"time_ns\":1 \"pid\":2}}\n{}", lines(&[exit(0, 1, 1)]), lines(&[exit(2, 1, 1)]));
    let mut reader = Reader::new(Cursor::new(text.as_bytes()));
    assert!(reader.next().unwrap().is_ok());
    let e = reader.next().unwrap().unwrap_err();
    assert_eq!(e.to_string(), "line 2: expected `,` or `}` at column 28; the line is not one `usertrace record --format json` writes; the file may be corrupt");
    assert!(reader.next().is_none());
}

#[test]
fn a_line_missing_a_field_or_with_a_wrong_type_is_named() {
    let e = read("{\"type\":\"lost\",\"time_ns\":1,\"cpu\":0}\n").unwrap_err();
    assert_eq!(e.to_string(), "line 1: a \"lost\" line has no \"count\"; the line is not one `usertrace record --format json` writes");
    let e = read("{\"type\":\"exit\",\"time_ns\":-1,\"pid\":1,\"tid\":1}\n").unwrap_err();
    assert!(e.to_string().starts_with("line 1: invalid value: integer `-1`, expected u64 at column"), "{e}");
    let e = read("{\"type\":\"event\",\"time_ns\":1,\"cpu\":0,\"pid\":1,\"tid\":1,\"comm\":\"c\",\"process\":\"p\",\"event\":\"e\",\"fields\":{\"a\":null}}\n")
        .unwrap_err();
    assert!(e.to_string().contains("expected a field value"), "{e}");
    let e = read("\u{feff}not json\n").unwrap_err();
    assert_eq!(e.line(), Some(1));
}

#[test]
fn a_missing_file_is_named() {
    let e = read_file(std::path::Path::new("/nonexistent/usertrace.jsonl")).unwrap_err();
    assert!(e.to_string().starts_with("cannot open /nonexistent/usertrace.jsonl: "), "{e}");
}

#[test]
fn an_events_stack_is_written_last_and_reads_back() {
    let plain = event(5, 1, 2, "e", &[("n", Value::Unsigned(1))]);
    assert!(!lines(std::slice::from_ref(&plain)).contains("stack"), "no stack, no field");
    let record = with_stack(plain, stack());
    let text = lines(std::slice::from_ref(&record));
    assert!(
        text.contains(r#""fields":{"n":1},"stack":[{"address":4198400,"module":"/usr/bin/app","module_offset":4096,"function":"inner","file":"app.c","line":3},{"address":139637976732212},{"address":4202496,"#),
        "{text}"
    );
    assert_eq!(read(&text).unwrap(), vec![record]);
}

//! `tracing` events arrive as one event each, named after the callsite,
//! with the level first, then the message and the fields, each with the
//! type `tracing` gave its value and the exact value.

use crate::support::*;

fn expected_events(p: &str, lines: &[u32]) -> (Vec<String>, Vec<Vec<(String, Typed)>>) {
    let [first, third] = lines[..] else { panic!("two unnamed events' lines: {lines:?}") };
    let names = vec![format!("{p}_ut_tracing_emit_{first}"), format!("{p}_second"), format!("{p}_ut_custom_{third}")];
    let fields = vec![
        expect(&[("level", s("INFO")), ("message", s("hello")), ("answer", Typed::U64(42)), ("name", s("x"))]),
        expect(&[
            ("level", s("WARN")),
            ("message", s("second 2")),
            ("delta", Typed::I64(-7)),
            ("ratio", Typed::F64(0.25)),
            ("ok", Typed::Bool(true)),
        ]),
        expect(&[
            ("level", s("ERROR")),
            ("list", s("[1, 2]")),
            ("shown", s("disp")),
            ("big", s(&u128::MAX.to_string())),
            ("http_method", s("GET")),
            ("bytes", Typed::Bytes(vec![0xde, 0xad])),
            ("nul", s(r"a\0b")),
        ]),
    ];
    (names, fields)
}

#[test]
fn events_arrive_with_exact_names_fields_types_and_values() {
    let p = unique("events");
    let run = record(&example(), &["events", &p], &format!("{p}_*"));
    let (names_expected, fields_expected) = expected_events(&p, &run.lines);
    assert_eq!(names(&run), names_expected, "{}", run.stdout);
    for (e, expected) in run.events.iter().zip(&fields_expected) {
        assert_eq!(&fields(e), expected, "{}", e.name());
        assert_eq!((e.pid, e.tid), (run.pid, run.pid));
        assert_eq!(&*e.comm, "ut_tracing_emit");
    }
}

#[test]
fn the_default_provider_is_the_program_s_name() {
    // The same program under a name of this test's own.
    let p = unique("default");
    let copy = std::env::temp_dir().join(&p);
    std::fs::copy(example(), &copy).unwrap();
    let run = record(&copy, &["events", "-"], &format!("{p}_*"));
    std::fs::remove_file(&copy).unwrap();
    let (names_expected, fields_expected) = expected_events(&p, &run.lines);
    assert_eq!(names(&run), names_expected);
    let got: Vec<_> = run.events.iter().map(fields).collect();
    assert_eq!(got, fields_expected);
}

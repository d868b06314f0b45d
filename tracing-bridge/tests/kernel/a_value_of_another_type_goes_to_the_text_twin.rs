//! A callsite registers with its first record's types; a later record
//! whose value fits (here a u64 again) is written there, and one whose
//! value does not (a string, a negative number in a u64 field) goes whole
//! to `<name>_text`, whose fields are all strings.

use crate::support::*;

#[test]
fn records_that_do_not_fit_their_callsite_s_types_arrive_on_the_text_twin() {
    let p = unique("mismatch");
    let run = record(&example(), &["mismatch", &p], &format!("{p}_*"));
    let [line] = run.lines[..] else { panic!("one line: {}", run.stdout) };
    let typed = format!("{p}_ut_tracing_emit_{line}");
    let text = format!("{typed}_text");
    assert_eq!(names(&run), [&typed, &text, &text, &typed]);
    let got: Vec<_> = run.events.iter().map(fields).collect();
    assert_eq!(
        got,
        [
            expect(&[("level", s("INFO")), ("message", s("m")), ("v", Typed::U64(5))]),
            expect(&[("level", s("INFO")), ("message", s("m")), ("v", s("five"))]),
            expect(&[("level", s("INFO")), ("message", s("m")), ("v", s("-1"))]),
            expect(&[("level", s("INFO")), ("message", s("m")), ("v", Typed::U64(6))]),
        ]
    );
}

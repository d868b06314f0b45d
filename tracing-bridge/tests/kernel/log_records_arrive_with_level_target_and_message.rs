//! `log` records arrive as `<provider>_log` events: level, target and the
//! formatted message, all strings; one too long for perf is cut to fit.

use crate::support::*;

#[test]
fn log_records_arrive_with_level_target_and_message() {
    let p = unique("log");
    let run = record(&example(), &["log", &p], &format!("{p}_*"));
    let log = format!("{p}_log");
    assert_eq!(names(&run), [log.as_str(); 3]);
    assert_eq!(fields(&run.events[0]), expect(&[("level", s("INFO")), ("target", s("ut_target")), ("message", s("hello 42"))]));
    assert_eq!(fields(&run.events[1]), expect(&[("level", s("ERROR")), ("target", s("ut_tracing_emit")), ("message", s("boom"))]));
    // 8184 bytes of payload: three location words, three NULs, the level
    // and the target; the rest is the message's.
    let room = usertrace::wire::MAX_PAYLOAD_LEN - 3 * 4 - 3 - "DEBUG".len() - "ut_tracing_emit".len();
    assert_eq!(
        fields(&run.events[2]),
        expect(&[("level", s("DEBUG")), ("target", s("ut_tracing_emit")), ("message", s(&"x".repeat(room)))])
    );
}

//! Issue 3 §4: a producer that emits 0, 1, 2, ... from the instant its
//! enable bit flips loses none of them, because every CPU's event is live
//! (or its CPU held) before the first open flips the bit.

use usertrace_consumer::{Output, Session, Window};

use crate::consumer_support::*;
use crate::support::PerfTracepoint;

#[test]
fn no_event_is_lost_from_the_moment_the_bit_flips() {
    for round in 0..5 {
        let name = unique("seq");
        let count = 3000u64;
        let mut producer = start(&["seq", &name, &count.to_string()]);
        let mut session = Session::open(&options(&name)).unwrap();
        let rec = record_until_exit(&mut session, &mut producer.child);

        let held = rec.outputs.iter().any(|o| matches!(o, Output::Attached { window: Window::Held, .. }));
        let attach = rec.outputs.iter().find(|o| matches!(o, Output::Attached { .. }));
        assert!(held, "round {round}: the other CPUs were not held: {attach:?}");
        assert_eq!(rec.stats.lost_total(), 0, "round {round}: ring overflowed; the test needs a bigger ring");
        let numbers: Vec<u64> = rec.events.iter().map(|e| unsigned(e, "n")).collect();
        let missing: Vec<u64> = (0..count).filter(|n| !numbers.contains(n)).take(10).collect();
        assert!(missing.is_empty(), "round {round}: {} of {count} arrived; first missing: {missing:?}", numbers.len());
        assert_eq!(numbers, (0..count).collect::<Vec<_>>(), "round {round}: out of order or duplicated");
        assert!(rec.events.iter().all(|e| e.pid == producer.pid && &*e.comm == "ut_emit"));
    }
}

/// The control: the same producer and the same check, but the bit is
/// flipped early by a disabled perf event (what `perf record` does when it
/// opens its events disabled), so everything written until the session
/// attaches goes nowhere. The check must see that gap, or the test above
/// proves nothing.
#[test]
fn the_check_sees_the_events_lost_when_the_bit_flips_early() {
    let name = unique("seq_early");
    let count = 4000u64;
    // 250 µs apart: about a second of events, longer than a session start.
    let mut producer = start(&["seq", &name, &count.to_string(), "250"]);
    let early = PerfTracepoint::open(&name, true);
    let mut session = Session::open(&options(&name)).unwrap();
    let rec = record_until_exit(&mut session, &mut producer.child);
    drop(early);

    assert_eq!(rec.stats.lost_total(), 0, "ring overflowed; the test needs a bigger ring");
    let numbers: Vec<u64> = rec.events.iter().map(|e| unsigned(e, "n")).collect();
    let missing: Vec<u64> = (0..count).filter(|n| !numbers.contains(n)).collect();
    assert!(!missing.is_empty(), "nothing was lost although the bit flipped before the session attached");
    assert!(!numbers.is_empty(), "the session attached after the producer finished: the control shows nothing");
    // What went missing is exactly what was written before the attach.
    let first = numbers[0];
    assert_eq!(missing, (0..first).collect::<Vec<_>>());
    assert_eq!(numbers, (first..count).collect::<Vec<_>>());
}

//! A flight recorder's window reads samples as having no stack, so a
//! session asked for both refuses to start, saying so, before it opens
//! anything (this runs on any kernel); and a bad pattern of stacks is a
//! bad pattern.

use std::time::Duration;

use usertrace_consumer::{Error, FlightOptions, Session, SessionOptions, Stacks};

fn options(stacks: Stacks) -> SessionOptions {
    SessionOptions { patterns: vec!["ut_nothing".into()], stacks, ..SessionOptions::default() }
}

#[test]
fn stacks_with_a_flight_recorder_are_refused_and_a_bad_stack_pattern_is_a_bad_pattern() {
    let flight = FlightOptions { keep: Duration::from_secs(1), max_bytes: 1 << 20, after: Duration::ZERO, switch: None };
    for stacks in [Stacks::All, Stacks::SpanBegins, Stacks::Matching(vec!["a_*".into()])] {
        let refused = Session::open(&SessionOptions { flight: Some(flight.clone()), ..options(stacks) });
        assert!(matches!(refused, Err(Error::StacksWithFlight)), "{:?}", refused.err());
    }
    let bad = Session::open(&options(Stacks::Matching(vec!["a:b:c".into()])));
    assert!(matches!(bad, Err(Error::BadPattern(_))), "{:?}", bad.err());
}

//! A one-page ring under a flood: LOST records say how many were dropped,
//! recording goes on, and received + lost = emitted.

use usertrace_consumer::{Output, Session, SessionOptions};

use crate::consumer_support::*;

#[test]
fn a_tiny_ring_counts_exactly_what_it_lost() {
    let name = unique("flood");
    let count = 50_000u64;
    let mut producer = start(&["seq", &name, &count.to_string()]);
    let options = SessionOptions { ring_pages: 1, ..options(&name) };
    let mut session = Session::open(&options).unwrap();
    let rec = record_until_exit(&mut session, &mut producer.child);

    let lost_records: u64 = rec.outputs.iter().map(|o| if let Output::Lost { count, sideband: false, .. } = o { *count } else { 0 }).sum();
    assert!(lost_records > 0, "a one-page ring kept up with {count} events: no overflow to test");
    assert_eq!(rec.stats.lost_total(), lost_records);
    assert_eq!(rec.events.len() as u64 + lost_records, count, "received + lost != emitted");
    // Recording went on after losses: the last numbers arrived.
    assert!(rec.events.iter().any(|e| unsigned(e, "n") == count - 1) || lost_records > 0);
}

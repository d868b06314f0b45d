//! `myapp_*` also attaches to tracepoints registered after the session
//! started, and says so.

use usertrace_consumer::{Output, Session};

use crate::consumer_support::*;

#[test]
fn tracepoints_registered_after_start_are_attached() {
    let prefix = unique("late");
    let mut session = Session::open(&options(&format!("{prefix}_*"))).unwrap();
    assert_eq!(session.attached().count(), 0);

    let name = format!("{prefix}_one");
    let mut producer = start(&["seq", &name, "100"]);
    let rec = record_until_exit(&mut session, &mut producer.child);

    let attached: Vec<&str> =
        rec.outputs.iter().filter_map(|o| if let Output::Attached { format, .. } = o { Some(format.name.as_str()) } else { None }).collect();
    assert_eq!(attached, vec![name.as_str()]);
    // The producer waits for its bit, so nothing is emitted before the attach.
    let numbers: Vec<u64> = rec.events.iter().map(|e| unsigned(e, "n")).collect();
    assert_eq!(numbers, (0..100).collect::<Vec<_>>());
}

//! Issue 3 §1: namespaces where permitted. As root the session records
//! them; each event carries the namespaces its thread was in when it was
//! emitted: from /proc for a process started before the session, from the
//! kernel's NAMESPACES records after an unshare and after a fork.

use usertrace_consumer::Session;

use crate::consumer_support::*;

#[test]
fn events_carry_the_namespaces_they_were_emitted_in() {
    let name = unique("ns");
    let mut producer = start(&["unshare", &name]);
    let mut session = Session::open(&options(&name)).unwrap();
    assert!(session.records_namespaces(), "root may record namespaces, but the session does not");
    let rec = record_until_exit(&mut session, &mut producer.child);

    let stages: Vec<u64> = rec.events.iter().map(|e| unsigned(e, "stage")).collect();
    assert_eq!(stages, [0, 1, 2], "{:?}", rec.events);
    for event in &rec.events {
        let ns = event.namespaces.as_deref().unwrap_or_else(|| panic!("no namespaces on {event:?}"));
        let stage = unsigned(event, "stage");
        assert_eq!(ns.uts, unsigned(event, "uts"), "uts namespace of stage {stage}");
        assert_eq!(ns.pid, unsigned(event, "pidns"), "pid namespace of stage {stage}");
    }
    let uts: Vec<u64> = rec.events.iter().map(|e| unsigned(e, "uts")).collect();
    assert_ne!(uts[0], uts[1], "unshare(CLONE_NEWUTS) gave no new namespace");
    assert_eq!(uts[1], uts[2], "the child inherits the new namespace");
    assert_eq!(rec.events[0].pid, producer.pid);
    assert_ne!(rec.events[2].pid, producer.pid, "stage 2 comes from the child");
}

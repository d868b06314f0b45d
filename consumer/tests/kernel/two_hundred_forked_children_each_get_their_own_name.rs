//! A parent forks 200 short-lived children that each rename themselves and
//! emit one event: 200 events, each with its own child's pid and name.

use std::collections::HashSet;

use usertrace_consumer::Session;

use crate::consumer_support::*;

#[test]
fn two_hundred_forked_children_each_get_their_own_name() {
    let name = unique("fork");
    let mut producer = start(&["fork", &name, "200"]);
    let mut session = Session::open(&options(&name)).unwrap();
    let rec = record_until_exit(&mut session, &mut producer.child);

    assert_eq!(rec.events.len(), 200);
    let mut pids = HashSet::new();
    let mut children = HashSet::new();
    for e in &rec.events {
        let i = unsigned(e, "child");
        assert_ne!(e.pid, producer.pid, "child {i} attributed to the parent");
        assert_eq!(e.tid, e.pid);
        assert_eq!(&*e.comm, format!("ut_child_{i}"), "event of child {i}");
        assert_eq!(&*e.process, format!("ut_child_{i}"));
        pids.insert(e.pid);
        children.insert(i);
    }
    assert_eq!(pids.len(), 200, "pids are not distinct");
    assert_eq!(children.len(), 200);
}

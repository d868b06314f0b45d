//! 200 children forked by a traced process each emit one event from a
//! registry of their own, under their own pid and name.

use std::collections::BTreeSet;
use std::process::Command;

use crate::support::*;

#[test]
fn a_fork_storm_of_200_children_arrives_under_each_child_s_name() {
    let name = unique("shm_fork");
    let out = Command::new(usertrace())
        .args(["record", "-e", &name, "--format", "json", "--"])
        .arg(ut_emit())
        .args(["fork", &name, "200"])
        .env("USERTRACE_TRANSPORT", "shm")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("200 events, 0 lost"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events = event_lines(&stdout);
    assert_eq!(events.len(), 200, "{stderr}");
    let mut pids = BTreeSet::new();
    let mut children = BTreeSet::new();
    for event in &events {
        let child = event["fields"]["child"].as_u64().unwrap();
        assert_eq!(event["comm"], format!("ut_child_{child}"), "{event}");
        pids.insert(event["pid"].as_u64().unwrap());
        children.insert(child);
    }
    assert_eq!(children, (0..200).collect::<BTreeSet<_>>());
    assert_eq!(pids.len(), 200, "each child under its own pid");
}

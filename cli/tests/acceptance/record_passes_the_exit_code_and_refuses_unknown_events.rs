//! The command's exit status comes back; unknown events and bad patterns
//! are clear errors with a non-zero exit.

use std::process::Command;

use crate::support::*;

#[test]
fn record_passes_the_exit_code_and_refuses_unknown_events() {
    let out = Command::new(usertrace()).args(["record", "-e", "nothing_*", "--", "/bin/sh", "-c", "exit 7"]).output().unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", String::from_utf8_lossy(&out.stderr));

    let name = unique("missing");
    let out = Command::new(usertrace()).args(["record", "-e", &name]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no user event matches"));

    let out = Command::new(usertrace()).args(["record", "-e", "a b"]).output().unwrap();
    // A bad value is a usage error, as main.rs documents.
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad event pattern"));
}

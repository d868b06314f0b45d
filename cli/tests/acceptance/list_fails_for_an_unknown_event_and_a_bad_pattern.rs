//! `usertrace list NAME` for an event nobody registered, or with a pattern
//! no event name can match, is a clear error with a non-zero exit; a glob
//! that matches nothing is not an error.

use std::process::{Command, Output};

use crate::support::*;

fn list(pattern: &str) -> (Output, String) {
    let out = Command::new(usertrace()).args(["list", pattern]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

#[test]
fn list_fails_for_an_unknown_event_and_a_bad_pattern() {
    let name = unique("nobody");
    let (out, stderr) = list(&name);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("no user event matches \"{name}\"")), "{stderr}");
    assert!(out.stdout.is_empty());

    let (out, stderr) = list(&format!("{name}_*"));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no user event matches"), "{stderr}");
    assert!(out.stdout.is_empty());

    let (out, stderr) = list("a/b");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad event pattern"), "{stderr}");
}

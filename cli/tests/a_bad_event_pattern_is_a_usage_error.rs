//! A pattern no event name can match (`-e 'a b'`) is a bad value on the
//! command line: exit status 2, as for every other bad value (cli/src/main.rs
//! documents the statuses), and the message says what a pattern may hold.
//! Checked before anything is opened, so it runs on any host.

use std::process::Command;

fn usertrace(args: &[&str]) -> std::process::Output {
    // No tracefs here: a status of 1 would be the unavailable kernel's.
    Command::new(env!("CARGO_BIN_EXE_usertrace")).args(args).env("USERTRACE_TRACEFS", "/nonexistent").output().unwrap()
}

#[test]
fn record_stat_and_list_exit_2_for_a_bad_pattern() {
    for args in [
        &["record", "-e", "bad pattern"][..],
        &["record", "-e", "ok_name,bad/name"],
        &["stat", "-e", "bad pattern"],
        &["stat", "-e", ""],
        &["list", "bad pattern"],
    ] {
        let o = usertrace(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("bad event pattern"), "{args:?}: {stderr}");
        assert!(stderr.contains("use [SYSTEM:]NAME"), "{args:?}: {stderr}");
    }
}

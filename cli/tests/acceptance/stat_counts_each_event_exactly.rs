//! `usertrace stat -e GLOB -- CMD` over a command that runs two producers
//! at once prints the exact count of each event, and a lost total of 0.

use std::process::Command;

use crate::support::*;

/// The `COUNT  WHAT` lines of stat's stdout (the command's own output, such
/// as ut_emit's `ready PID`, is mixed in and skipped).
fn counts(stdout: &str) -> Vec<(u64, String)> {
    stdout
        .lines()
        .filter_map(|l| {
            let (count, what) = l.trim_start().split_once("  ")?;
            Some((count.parse().ok()?, what.to_owned()))
        })
        .collect()
}

#[test]
fn stat_counts_each_event_exactly() {
    let name = unique("stat");
    let emit = ut_emit();
    let script = format!("{e} seq {name}_a 1000 & {e} seq {name}_b 2345; wait", e = emit.display());
    let out = Command::new(usertrace()).args(["stat", "-e", &format!("{name}_*"), "--", "/bin/sh", "-c", &script]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.lines().any(|l| l.trim() == "count  event"), "{stdout}");
    assert_eq!(
        counts(&stdout),
        vec![
            (1000, format!("user_events:{name}_a")),
            (2345, format!("user_events:{name}_b")),
            (0, "lost".to_owned()),
        ],
        "{stdout}"
    );
    assert!(stderr.contains("3345 events, 0 lost"), "{stderr}");
}

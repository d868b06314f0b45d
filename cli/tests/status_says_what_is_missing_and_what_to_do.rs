//! `usertrace status` on a tracefs without user_events: a non-zero exit, and
//! a message naming what is missing and what to do. Runs on any host: the
//! tracefs it looks at is a scratch directory (what the message then says
//! depends on the host's kernel config, which names CONFIG_USER_EVENTS
//! whatever it says).

use std::process::Command;

#[test]
fn status_names_the_missing_piece_and_exits_non_zero() {
    let dir = std::env::temp_dir().join(format!("usertrace-status-test-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("events")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_usertrace")).arg("status").env("USERTRACE_TRACEFS", &dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // The verdict first, naming the missing option.
    let first = text.lines().next().unwrap_or_default();
    assert!(first.starts_with("user_events:  user_events is not available: "), "{text}");
    assert!(first.contains("CONFIG_USER_EVENTS"), "{text}");
    assert!(text.contains(&format!("tracefs:      {}", dir.display())), "{text}");
    assert!(text.lines().any(|l| l.starts_with("config:       ")), "{text}");
    // Without user_events_data in that tracefs, programs take shared memory.
    assert!(text.contains("\ntransport:    shm: "), "{text}");
    assert!(text.contains("\nrecording:    allowed through shared memory") || text.contains("\nrecording:    not allowed: shared memory"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_usertrace")).args(["status", "extra"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

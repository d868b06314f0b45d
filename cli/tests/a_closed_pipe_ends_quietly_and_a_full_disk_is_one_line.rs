//! What a command prints goes to standard output; when the reader has gone
//! (`usertrace report big.jsonl | head -1`) the command ends quietly with
//! status 0, as `head` expects, and any other failure to write it (a full
//! disk) is one line on stderr and status 1. Never a panic. Runs on any
//! host.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-stdout-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A recording of 20,000 differently named events: its report is far
/// larger than a pipe holds (64 KiB), so a closed pipe is met while
/// writing.
fn big_recording(dir: &std::path::Path) -> PathBuf {
    let mut text = String::new();
    for i in 0..20_000 {
        let _ = writeln!(
            text,
            "{{\"type\":\"event\",\"time_ns\":{i},\"cpu\":0,\"pid\":5,\"tid\":5,\"comm\":\"app\",\"process\":\"app\",\"event\":\"event_number_{i:05}\",\"fields\":{{}}}}"
        );
    }
    let path = dir.join("big.jsonl");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn report_into_a_pipe_closed_after_one_line_exits_0_and_says_nothing() {
    let dir = scratch("pipe");
    let input = big_recording(&dir);
    for format in ["text", "json"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_usertrace"))
            .args(["report", input.to_str().unwrap(), "--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        // The reader is dropped: the pipe is closed, as `head -1` does.
        let o = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{format}: {stderr}");
        assert_eq!(stderr, "", "{format}");
    }
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn report_into_a_full_disk_exits_1_with_one_line_naming_it() {
    let dir = scratch("full");
    let input = big_recording(&dir);
    for format in ["text", "json"] {
        let o = Command::new(env!("CARGO_BIN_EXE_usertrace"))
            .args(["report", input.to_str().unwrap(), "--format", format])
            .stdout(File::options().write(true).open("/dev/full").unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{format}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{format}: {stderr}");
        assert!(stderr.starts_with("usertrace report: cannot write standard output: No space left on device"), "{format}: {stderr}");
    }
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn status_into_a_full_disk_exits_1_with_one_line_naming_it() {
    let o = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["status"])
        // Whatever user_events' state here, it has lines to print.
        .env("USERTRACE_TRACEFS", "/nonexistent")
        .stdout(File::options().write(true).open("/dev/full").unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("usertrace status: cannot write standard output: No space left on device"), "{stderr}");
}

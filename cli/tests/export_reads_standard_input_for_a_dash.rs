//! `usertrace export -` reads the recording from standard input, as
//! `convert` and `report` do: a bad first line there is named as line 1 of
//! what was read, not taken for a file called `-`. Nothing is delivered,
//! so no collector is needed (127.0.0.1:9 refuses). Runs on any host.

use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn export_reads_standard_input_for_a_dash() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["export", "-", "--otlp", "http://127.0.0.1:9", "--timeout", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"{\"type\":\n").unwrap();
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(": line 1: "), "{stderr}");
    assert!(!stderr.contains("cannot open"), "{stderr}");
}

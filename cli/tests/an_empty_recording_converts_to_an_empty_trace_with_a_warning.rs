//! A recording with no records (an empty file, or only blank lines) is
//! converted to a valid empty output with status 0, as perf and other
//! converters do, and stderr says it held no records; `report` says so too.
//! Runs on any host.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

fn usertrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usertrace")).args(args).output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-empty-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn convert_writes_an_empty_trace_and_says_why() {
    let dir = scratch("convert");
    let input = dir.join("empty.jsonl");
    fs::write(&input, "\n\n").unwrap();
    for out in ["out.jsonl", "out.json", "out.pftrace"] {
        let path = dir.join(out);
        let o = usertrace(&["convert", input.to_str().unwrap(), path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{out}: {stderr}");
        assert_eq!(stderr, format!("usertrace convert: {} holds no records: the output is an empty trace\n", input.display()), "{out}");
        assert!(path.exists(), "{out}");
    }
    assert_eq!(fs::read(dir.join("out.jsonl")).unwrap(), b"");
    let chrome: serde_json::Value = serde_json::from_slice(&fs::read(dir.join("out.json")).unwrap()).unwrap();
    assert!(chrome["traceEvents"].is_array(), "{chrome}");
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn report_says_the_recording_held_no_records() {
    let dir = scratch("report");
    let input = dir.join("empty.jsonl");
    fs::write(&input, "").unwrap();
    let o = usertrace(&["report", input.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stderr), format!("usertrace report: {} holds no records\n", input.display()));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("recording: "));
    fs::remove_dir_all(dir).unwrap();
}

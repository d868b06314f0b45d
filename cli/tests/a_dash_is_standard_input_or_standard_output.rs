//! `-` names standard output where a command writes a file, and standard
//! input where it reads a recording: `convert - out`, `convert in -`,
//! `report -`. No file named `-` is ever made. Runs on any host.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-dash-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `usertrace ARGS` in `dir`, with `stdin` as its standard input.
fn usertrace_in(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        // A command that does not read its input closes it: not our error.
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

const GOOD: &str = "\
{\"type\":\"process\",\"time_ns\":1,\"pid\":5,\"executable\":\"/bin/app\",\"command_line\":[\"app\"]}
{\"type\":\"event\",\"time_ns\":10,\"cpu\":0,\"pid\":5,\"tid\":5,\"comm\":\"app\",\"process\":\"app\",\"event\":\"req\",\"fields\":{\"span_begin\":1}}
{\"type\":\"event\",\"time_ns\":30,\"cpu\":0,\"pid\":5,\"tid\":5,\"comm\":\"app\",\"process\":\"app\",\"event\":\"req\",\"fields\":{\"span_end\":1}}
";

fn assert_ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn convert_writes_standard_output_for_a_dash() {
    let dir = scratch("convert-out");
    fs::write(dir.join("in.jsonl"), GOOD).unwrap();
    let o = usertrace_in(&dir, &["convert", "in.jsonl", "-", "--format", "json"], "");
    assert_ok(&o);
    assert_eq!(String::from_utf8(o.stdout).unwrap(), GOOD);
    assert!(!dir.join("-").exists(), "a file named - was made");
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn convert_reads_standard_input_for_a_dash() {
    let dir = scratch("convert-in");
    let o = usertrace_in(&dir, &["convert", "-", "out.jsonl"], GOOD);
    assert_ok(&o);
    assert_eq!(fs::read_to_string(dir.join("out.jsonl")).unwrap(), GOOD);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn convert_reads_and_writes_the_standard_streams() {
    let dir = scratch("convert-both");
    let o = usertrace_in(&dir, &["convert", "-", "-", "--format", "json"], GOOD);
    assert_ok(&o);
    assert_eq!(String::from_utf8(o.stdout).unwrap(), GOOD);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn report_reads_standard_input_for_a_dash() {
    let dir = scratch("report");
    fs::write(dir.join("in.jsonl"), GOOD).unwrap();
    let from_file = usertrace_in(&dir, &["report", "in.jsonl", "--format", "json"], "");
    assert_ok(&from_file);
    let from_stdin = usertrace_in(&dir, &["report", "-", "--format", "json"], GOOD);
    assert_ok(&from_stdin);
    assert_eq!(String::from_utf8(from_stdin.stdout).unwrap(), String::from_utf8(from_file.stdout).unwrap());
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_bad_line_on_standard_input_is_named_so() {
    let dir = scratch("stdin-bad");
    let o = usertrace_in(&dir, &["report", "-"], "{\"type\":\n");
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.starts_with("usertrace report: standard input: line 1: "), "{stderr}");
    fs::remove_dir_all(dir).unwrap();
}

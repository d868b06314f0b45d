//! `usertrace convert` and `report` read a JSON-lines recording; a bad line
//! is named with its number, what was wrong and what it may mean, the exit
//! status is 1, and convert leaves no output file behind. Runs on any host.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn usertrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usertrace")).args(args).output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-convert-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const GOOD: &str = "\
{\"type\":\"process\",\"time_ns\":1,\"pid\":5,\"executable\":\"/bin/app\",\"command_line\":[\"app\"]}
{\"type\":\"event\",\"time_ns\":10,\"cpu\":0,\"pid\":5,\"tid\":5,\"comm\":\"app\",\"process\":\"app\",\"event\":\"req\",\"fields\":{\"span_begin\":1}}
{\"type\":\"event\",\"time_ns\":30,\"cpu\":0,\"pid\":5,\"tid\":5,\"comm\":\"app\",\"process\":\"app\",\"event\":\"req\",\"fields\":{\"span_end\":1}}
";

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn a_truncated_recording_is_named_by_line_and_nothing_is_written() {
    let dir = scratch("truncated");
    let input = dir.join("in.jsonl");
    std::fs::write(&input, &GOOD[..GOOD.len() - 12]).unwrap();
    for out in ["out.pftrace", "out.json"] {
        let o = usertrace(&["convert", input.to_str().unwrap(), dir.join(out).to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.starts_with(&format!("usertrace convert: {}: line 3: ", input.display())), "{stderr}");
        assert!(stderr.contains("at column") && stderr.contains("the file may be truncated"), "{stderr}");
    }
    assert_eq!(entries(&dir), ["in.jsonl"]);
    let o = usertrace(&["report", input.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains(": line 3: "), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_good_recording_converts_to_every_format_and_reports() {
    let dir = scratch("good");
    let input = dir.join("in.jsonl");
    std::fs::write(&input, GOOD).unwrap();
    for out in ["out.pftrace", "out.json", "out.jsonl"] {
        let o = usertrace(&["convert", input.to_str().unwrap(), dir.join(out).to_str().unwrap()]);
        assert!(o.status.success(), "{out}: {}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(std::fs::read_to_string(dir.join("out.jsonl")).unwrap(), GOOD);
    let chrome: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    assert!(chrome["traceEvents"].as_array().unwrap().iter().any(|e| e["ph"] == "X" && e["name"] == "req" && e["dur"] == 0.02));
    assert_eq!(entries(&dir), ["in.jsonl", "out.json", "out.jsonl", "out.pftrace"]);

    let o = usertrace(&["report", input.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success());
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((&report["spans"][0]["name"], &report["spans"][0]["max_ns"]), (&"req".into(), &20.into()));
    assert_eq!(report["processes"][0]["name"], "app");
    let o = usertrace(&["report", input.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("span req: 1 finished"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn convert_refuses_an_unknown_extension_and_an_unwritable_destination() {
    let dir = scratch("refuse");
    let input = dir.join("in.jsonl");
    std::fs::write(&input, GOOD).unwrap();
    let o = usertrace(&["convert", input.to_str().unwrap(), dir.join("out.bin").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give --format"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = usertrace(&["convert", input.to_str().unwrap(), dir.join("no/such/out.pftrace").to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no/such/out.pftrace") && stderr.contains("check that the directory exists"), "{stderr}");
    let o = usertrace(&["convert", dir.join("missing.jsonl").to_str().unwrap(), dir.join("out.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot open"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(entries(&dir), ["in.jsonl"]);
    std::fs::remove_dir_all(dir).unwrap();
}

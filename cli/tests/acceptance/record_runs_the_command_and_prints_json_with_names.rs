//! `usertrace record --format json -- CMD` runs CMD held until attach, and
//! prints its events as JSON lines with pid, comm and typed fields, through
//! a rename and an exec.

use std::process::Command;

use crate::support::*;

#[test]
fn record_runs_the_command_and_prints_json_with_names() {
    let name = unique("json");
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}*"), "--format", "json", "--"])
        .arg(ut_emit())
        .args(["rename", &name])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("attached user_events:{name}")), "{stderr}");
    assert!(stderr.contains("3 events, 0 lost"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    // The command shares stdout: keep our event lines only.
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("{\"type\":\"event\"")).collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    let pid = lines[0].split("\"pid\":").nth(1).unwrap().split(',').next().unwrap();
    let new: String = format!("ut-new-{pid}").chars().take(15).collect();
    for (line, (comm, stage, note)) in lines.iter().zip([("ut_emit", 1, "E1"), ("ut_renamed", 2, "E2"), (new.as_str(), 3, "E3")]) {
        assert!(line.contains(&format!("\"pid\":{pid},\"tid\":{pid},\"comm\":\"{comm}\",\"process\":\"{comm}\"")), "{line}");
        assert!(line.contains(&format!("\"event\":\"{name}\",\"fields\":{{\"stage\":{stage},\"note\":\"{note}\"}}}}")), "{line}");
    }
}

//! perf's habits: `-a` is accepted (every CPU is what usertrace records),
//! `-q` leaves stderr empty for a run that lost nothing, `-v` adds how the
//! session is set up, and `-o -` is standard output, never a file named
//! `-`.

use std::process::Command;

use crate::support::*;

#[test]
fn record_is_quiet_with_q_says_more_with_v_and_takes_a_dash_for_stdout() {
    let name = unique("quiet");
    let dir = std::env::temp_dir().join(format!("usertrace-quiet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(usertrace())
        .args(["record", "-q", "-a", "-e", &name, "--format", "json", "-o", "-", "--"])
        .arg(ut_emit())
        .args(["seq", &name, "5"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr, "", "-q: nothing but errors and losses");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let numbers: Vec<String> = stdout
        .lines()
        .filter(|l| l.starts_with("{\"type\":\"event\""))
        .map(|l| l.split("\"fields\":").nth(1).unwrap().to_owned())
        .collect();
    let expected: Vec<String> = (0..5).map(|n| format!("{{\"n\":{n}}}}}")).collect();
    assert_eq!(numbers, expected, "{stdout}");
    assert!(!dir.join("-").exists(), "-o - made a file named -");
    std::fs::remove_dir_all(&dir).unwrap();

    let out = Command::new(usertrace()).args(["record", "-v", "-e", &name, "--buffer-size", "64", "--"]).arg(ut_emit()).args(["seq", &name, "3"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.contains(&format!("usertrace record: on every CPU, rings of 64 pages (256 KiB) each; events matching {name}; namespaces recorded").as_str()),
        "-v names the setup (the guest runs as root, so namespaces are recorded): {stderr}"
    );
    assert!(lines.contains(&format!("usertrace record: attached user_events:{name}").as_str()), "{stderr}");
    assert!(lines.iter().any(|l| l.starts_with("usertrace record: 3 events, 0 lost, ")), "{stderr}");

    let out = Command::new(usertrace()).args(["stat", "-q", "-e", &name, "--"]).arg(ut_emit()).args(["seq", &name, "4"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr, "", "stat -q: the counts are on stdout, nothing on stderr");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.lines().any(|l| l.trim_start() == format!("4  user_events:{name}")), "{stdout}");
}

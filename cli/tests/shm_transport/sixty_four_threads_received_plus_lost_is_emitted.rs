//! 64 threads writing 2000 events each into their own rings: what `stat`
//! counts plus what it reports lost is exactly what was emitted.

use std::process::Command;

use crate::support::*;

#[test]
fn sixty_four_threads_received_plus_lost_is_emitted() {
    let name = unique("shm_threads");
    let out = Command::new(usertrace())
        .args(["stat", "-e", &name, "--format", "json", "--"])
        .arg(ut_emit())
        .args(["threads", &name, "64", "2000"])
        .env("USERTRACE_TRANSPORT", "shm")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let json: serde_json::Value = stdout
        .lines()
        .find_map(|l| serde_json::from_str(l).ok().filter(|v: &serde_json::Value| v.get("lost").is_some()))
        .unwrap_or_else(|| panic!("no stat JSON in {stdout}"));
    let counted = json["counts"][format!("user_events:{name}")].as_u64().unwrap_or(0);
    let lost = json["lost"].as_u64().unwrap();
    assert_eq!(counted + lost, 64 * 2000, "{json}");
}

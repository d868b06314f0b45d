//! A producer thread's shared-memory ring is the producer's, sized by
//! `USERTRACE_SHM_RING_KIB`, not by `--buffer-size`: when it fills, the
//! recorder names the thread and says what to change, and `stat` counts
//! the loss apart from the CPUs' perf rings, so that counted plus lost is
//! still what was emitted.

use std::process::Command;

use crate::support::*;

#[test]
fn a_full_ring_is_named_as_the_thread_s_own_with_what_sizes_it() {
    let name = unique("shm_full");
    // 4 KiB, the smallest ring, holds about a hundred of these events;
    // 20,000 written without a pause fill it many times over.
    let out = Command::new(usertrace())
        .args(["stat", "-e", &name, "--format", "json", "--"])
        .arg(ut_emit())
        .args(["seq", &name, "20000", "0"])
        .env("USERTRACE_TRANSPORT", "shm")
        .env("USERTRACE_SHM_RING_KIB", "4")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let pid: u32 = stdout.lines().find_map(|l| l.strip_prefix("ready ")).expect("ut_emit said ready").trim().parse().unwrap();
    let json: serde_json::Value = stdout
        .lines()
        .find_map(|l| serde_json::from_str(l).ok().filter(|v: &serde_json::Value| v.get("lost").is_some()))
        .unwrap_or_else(|| panic!("no stat JSON in {stdout}"));

    let counted = json["counts"][format!("user_events:{name}")].as_u64().unwrap();
    let lost = json["lost"].as_u64().unwrap();
    assert!(lost > 0, "a 4 KiB ring lost nothing of 20,000 events: {json}");
    assert_eq!(counted + lost, 20_000, "{json}");
    assert_eq!(json["lost_in_shared_memory"].as_u64(), Some(lost), "{json}");
    assert_eq!(json["lost_by_cpu"], serde_json::json!([]), "no CPU's perf ring lost anything: {json}");

    // Its one thread is its main thread: the tid is the pid.
    let told: Vec<&str> = stderr.lines().filter(|l| l.contains(" lost ")).collect();
    assert!(!told.is_empty(), "{stderr}");
    for line in &told {
        assert!(line.starts_with(&format!("usertrace stat: thread {pid} lost ")), "{line}");
        assert!(line.contains("its shared-memory ring was full") && line.contains("USERTRACE_SHM_RING_KIB"), "{line}");
        assert!(!line.contains("--buffer-size"), "--buffer-size does not size a producer's ring: {line}");
    }
    let told_total: u64 = told.iter().map(|l| l.split(" lost ").nth(1).unwrap().split(' ').next().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(told_total, lost, "{stderr}");
}

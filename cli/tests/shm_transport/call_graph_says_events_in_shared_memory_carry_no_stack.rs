//! `--call-graph fp` on a kernel without user_events: perf takes a stack
//! only where the kernel writes the event, and here every program writes
//! to shared memory. The recorder says so, and records the events without
//! one, rather than leaving the user to find the stacks missing.

use std::process::Command;

use crate::support::*;

#[test]
fn call_graph_says_events_in_shared_memory_carry_no_stack() {
    let name = unique("shm_stacks");
    let out = Command::new(usertrace())
        .args(["record", "--call-graph", "fp", "-e", &name, "--format", "json", "--"])
        .arg(ut_emit())
        .args(["seq", &name, "3", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("usertrace record: --call-graph: this kernel has no usable user_events")
            && stderr.contains("shared memory, where perf cannot take their stacks"),
        "{stderr}"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events: Vec<serde_json::Value> =
        stdout.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()).filter(|v| v["type"] == "event").collect();
    assert_eq!(events.iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 2], "{stdout}");
    assert!(events.iter().all(|e| e.get("stack").is_none()), "{stdout}");
}

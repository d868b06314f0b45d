//! A producer in a container (its own /dev/shm and PID namespace, uid
//! 1000, no capabilities) that emits three events and exits at once, as a
//! job or a CLI does. A container's rings are read only at the poll
//! interval (its producer cannot wake the recorder), by when its
//! /proc/PID is gone; the recorder read its description when it took its
//! registry, before turning its tracepoint on. So its events still come
//! with its program, its pid inside (1) and its container.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::container::{cgroup2_root, Container, Identity};
use crate::support::*;

#[test]
fn a_container_process_gone_right_after_its_events_keeps_its_description() {
    let _one = crate::container::exclusive();
    let name = unique("shm_brief");
    // The identity is checked where this host lets a test make the cgroup
    // that carries it (cgroup v2, writable), as in the two-container test.
    let identity = cgroup2_root().map(|_| Identity::new());
    let mut container = Container::start(&["seq", &name, "3"], identity.as_ref());
    let out = Command::new(usertrace()).args(["record", "-e", &name, "--format", "json", "--", "sleep", "2"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);

    let events = event_lines(&stdout);
    let values: Vec<u64> = events.iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(values, vec![0, 1, 2], "{stdout}{stderr}");
    assert!(events.iter().all(|e| e["pid"] == container.host_pid && e["event"] == name.as_str()), "{stdout}");
    // It did not linger: gone well before the recording ended.
    let deadline = Instant::now() + Duration::from_secs(2);
    while container.running() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!container.running(), "the producer should have exited after its three events");

    let process = stdout.lines().find(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let process = process.unwrap_or_else(|| panic!("no process record: {stdout}"));
    assert_eq!(process["pid"], container.host_pid, "{process}");
    assert_eq!(process["pid_in_container"], 1, "{process}");
    let program = ut_emit().display().to_string();
    assert_eq!(process["executable"], program.as_str(), "{process}");
    assert_eq!(process["command_line"], serde_json::json!([program, "seq", name, "3"]), "{process}");
    if let Some(identity) = &identity {
        assert_eq!(process["container_id"], identity.container_id.as_str(), "{process}");
        assert_eq!(process["pod_uid"], identity.pod_uid.as_str(), "{process}");
    }
}

//! A real container runtime: Debian's podman runs `ut_emit` from a root
//! file system this test builds (the binary and the libraries it links),
//! as uid 1000 with every capability dropped and no_new_privs, with
//! podman's own private /dev/shm and PID namespace. The root recorder
//! records it under its host pid, with pid 1 inside and the container id
//! podman gave it.
//!
//! Skipped, saying so, where podman or runc is not installed, except under
//! CI, where harness/setup installs them (see `podman.rs` for how podman
//! is run here).

use crate::podman::{self, Podman};
use crate::support::*;

#[test]
fn a_producer_under_podman_is_recorded_with_its_container_id() {
    if !podman::installed() {
        return;
    }
    let _one = crate::container::exclusive();
    let name = unique("shm_podman");
    let mut podman = Podman::new(&name);
    let root = podman.rootfs("rootfs", &[&ut_emit()]);
    let mut producer = Podman::start_ready(
        podman
            .run(&name)
            .args(["-e", "USERTRACE_TRANSPORT=shm", "--user", "1000:1000", "--cap-drop=all", "--security-opt", "no-new-privileges", "--rootfs"])
            .arg(&root)
            .args(["/usr/bin/ut_emit", "seq", &name, "10", "100000"]),
    );
    let podman_id = podman.id(&name);
    let out = std::process::Command::new(usertrace()).args(["record", "-e", &name, "--format", "json", "--", "sleep", "2.5"]).output().unwrap();
    let _ = producer.kill();
    let _ = producer.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let values: Vec<u64> = event_lines(&stdout).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(values, (0..10).collect::<Vec<_>>(), "{stderr}");
    let process: serde_json::Value =
        stdout.lines().find(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str(l).unwrap()).expect("a process record");
    assert_eq!(process["pid_in_container"], 1, "{process}");
    // The id podman knows it by is the one its cgroup path carries.
    assert_eq!(process["container_id"], podman_id.as_str(), "{process}");
    assert!(event_lines(&stdout).iter().all(|e| e["pid"] == process["pid"]), "{stdout}");
}

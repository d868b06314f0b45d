//! Two containers, each with its own /dev/shm, PID namespace and user,
//! whose producers are both pid 1 inside: one started before the
//! recorder, one while it runs. The root recorder, sharing nothing with
//! them, records each one's events exactly, under its own host pid, and
//! names each process with its host pid, its pid inside (1), its
//! container id and its pod's uid (from the cgroup a node would give it).

use std::process::Command;
use std::time::Duration;

use crate::container::{cgroup2_root, Container, Identity};
use crate::support::*;

#[test]
fn producers_in_two_containers_both_pid_1_are_recorded_apart_under_their_host_pids() {
    let _one = crate::container::exclusive();
    let prefix = unique("shm_pods");
    let (first, second) = (format!("{prefix}_before"), format!("{prefix}_after"));
    // The identities are checked only where this host lets a test make
    // the cgroups that carry them (cgroup v2, writable); the parsing is
    // unit-tested in consumer/src/containers/tests.rs either way.
    let identities = cgroup2_root().map(|_| (Identity::new(), Identity::new()));
    // Alive for a second after the recorder turns it on: long enough for
    // the recorder to read its /proc while it runs.
    let before = Container::start(&["seq", &first, "10", "100000"], identities.as_ref().map(|i| &i.0));
    let recorder = Command::new(usertrace())
        .args(["record", "-e", &format!("{prefix}_*"), "--format", "json", "--", "sleep", "3.5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let after = Container::start(&["seq", &second, "10", "100000"], identities.as_ref().map(|i| &i.1));
    let out = recorder.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);

    // Every event, exactly, under the host pid of the container it came from.
    let events = event_lines(&stdout);
    for (name, container) in [(&first, &before), (&second, &after)] {
        let theirs: Vec<_> = events.iter().filter(|e| e["event"] == name.as_str()).collect();
        let values: Vec<u64> = theirs.iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
        assert_eq!(values, (0..10).collect::<Vec<_>>(), "{name}: {stderr}");
        assert!(theirs.iter().all(|e| e["pid"] == container.host_pid && e["tid"] == container.host_pid), "{name}: {theirs:?}");
    }
    assert_ne!(before.host_pid, after.host_pid);

    // Each process named with both pids and its container.
    let processes: Vec<serde_json::Value> =
        stdout.lines().filter(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str(l).unwrap()).collect();
    for (index, container) in [&before, &after].into_iter().enumerate() {
        let process = processes.iter().find(|p| p["pid"] == container.host_pid).unwrap_or_else(|| panic!("{processes:?}"));
        assert_eq!(process["pid_in_container"], 1, "{process}");
        assert!(process["executable"].as_str().is_some_and(|e| e.ends_with("/ut_emit")), "{process}");
        if let Some((a, b)) = &identities {
            let identity = if index == 0 { a } else { b };
            assert_eq!(process["container_id"], identity.container_id.as_str(), "{process}");
            assert_eq!(process["pod_uid"], identity.pod_uid.as_str(), "{process}");
        }
    }
}

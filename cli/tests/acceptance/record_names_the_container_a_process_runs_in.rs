//! `container.id` "where recorded": a process that runs in a container's
//! cgroup (here one named as Docker names its scopes, made by the test,
//! which is root in the guest) is described with that container's id in
//! the recording, while a process outside one has none.

use std::process::Command;

use serde_json::Value;

use crate::support::*;

/// Where cgroup v2 is mounted, mounting it under /tmp if nothing has.
fn cgroup2_root() -> String {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    if let Some(line) = mounts.lines().find(|l| l.split(' ').nth(2) == Some("cgroup2")) {
        return line.split(' ').nth(1).unwrap().to_owned();
    }
    let root = "/tmp/usertrace-cgroup2";
    std::fs::create_dir_all(root).unwrap();
    let status = Command::new("mount").args(["-t", "cgroup2", "none", root]).status().unwrap();
    assert!(status.success(), "cannot mount cgroup2 at {root}");
    root.to_owned()
}

#[test]
fn a_process_in_a_containers_cgroup_is_recorded_with_its_container_id() {
    let name = unique("container");
    let id = format!("{:0>64}", format!("{:x}c0ffee", std::process::id()));
    let cgroup = format!("{}/docker-{id}.scope", cgroup2_root());
    std::fs::create_dir_all(&cgroup).unwrap();
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("rec.jsonl");

    // The first ut_emit moves itself into the container's cgroup, as a
    // runtime would, and execs; the second stays where the test is.
    let script = format!(
        "echo $$ > {cgroup}/cgroup.procs && exec {ut_emit} seq {name} 2",
        ut_emit = ut_emit().display()
    );
    let out = Command::new(usertrace())
        .args(["record", "-e", &name, "-o"])
        .arg(&jsonl)
        .args(["--", "sh", "-c"])
        .arg(format!("sh -c '{script}' && {} seq {name} 2", ut_emit().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let pids: Vec<u64> = stdout.lines().filter_map(|l| l.strip_prefix("ready ")).map(|p| p.trim().parse().unwrap()).collect();
    assert_eq!(pids.len(), 2, "{stdout}");

    let lines: Vec<Value> = std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let described = |pid: u64| {
        let p: Vec<&Value> = lines.iter().filter(|l| l["type"] == "process" && l["pid"] == pid).collect();
        assert_eq!(p.len(), 1, "one description of {pid}: {lines:#?}");
        p[0].clone()
    };
    let (inside, outside) = (described(pids[0]), described(pids[1]));
    assert_eq!(inside["container_id"], id.as_str(), "{inside}");
    assert!(inside["executable"].as_str().unwrap().ends_with("/ut_emit"), "{inside}");
    assert_eq!(outside.get("container_id"), None, "{outside}");
    let events = |pid: u64| lines.iter().filter(|l| l["type"] == "event" && l["pid"] == pid).count();
    assert_eq!((events(pids[0]), events(pids[1])), (2, 2));

    let _ = std::fs::remove_dir_all(&dir);
    // Empty once its process exited; a cgroup directory is removed with rmdir.
    let _ = std::fs::remove_dir(&cgroup);
}

//! `record -o FILE.data` alone, over shared memory: the recorder only
//! counts events as they pass (nothing else takes them), and the archive
//! holds each of 200 forked children's event, under the child's own name,
//! as `convert` reads it back.

use std::collections::BTreeSet;
use std::process::Command;

use crate::support::*;

#[test]
fn the_archive_alone_holds_and_counts_every_childs_event() {
    let name = unique("shm_archive");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("fork.data");
    let out = Command::new(usertrace())
        .args(["record", "-e", &name, "-o", data.to_str().unwrap(), "--"])
        .arg(ut_emit())
        .args(["fork", &name, "200"])
        .env("USERTRACE_TRANSPORT", "shm")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("200 events, 0 lost"), "the count of what the archive holds: {stderr}");

    let converted = Command::new(usertrace()).args(["convert", data.to_str().unwrap(), "-", "--format", "json"]).output().unwrap();
    assert!(converted.status.success(), "{}", String::from_utf8_lossy(&converted.stderr));
    let stdout = String::from_utf8(converted.stdout).unwrap();
    let events = event_lines(&stdout);
    assert_eq!(events.len(), 200, "{stdout}");
    let mut children = BTreeSet::new();
    for event in &events {
        let child = event["fields"]["child"].as_u64().unwrap();
        assert_eq!(event["comm"], format!("ut_child_{child}"), "{event}");
        children.insert(child);
    }
    assert_eq!(children, (0..200).collect::<BTreeSet<_>>());
    let _ = std::fs::remove_dir_all(&dir);
}

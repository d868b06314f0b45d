//! A producer already running when `usertrace record` starts is found in
//! /dev/shm (late attach): its enable word flips, and every event it writes
//! from then on arrives, in order.

use std::process::Command;

use crate::support::*;

#[test]
fn a_producer_started_before_the_recorder_is_found_and_loses_nothing() {
    let name = unique("shm_late");
    let (mut producer, pid) = crate::ready_producer(&name, 500, 200);
    // Reaped as soon as it exits, so that the recorder's command (which
    // waits for the pid to go) ends then.
    let reaper = std::thread::spawn(move || producer.wait().unwrap());
    let out = Command::new(usertrace())
        .args(["record", "-e", &name, "--format", "json", "-p", &pid, "--", "sh", "-c"])
        .arg(format!("while kill -0 {pid} 2>/dev/null; do sleep 0.05; done"))
        .output()
        .unwrap();
    assert!(reaper.join().unwrap().success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let numbers: Vec<u64> = event_lines(&stdout).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (0..500).collect::<Vec<_>>(), "{stderr}");
}

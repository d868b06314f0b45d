//! The time the recorder gives an event in shared memory lies between two
//! reads of CLOCK_MONOTONIC the producer made just before and just after
//! the emit: on the TSC path (the default where the TSC is the monotonic
//! clock's source, as on our machines), within the conversion's error, and
//! on the `clock_gettime` path (`USERTRACE_SHM_CLOCK=monotonic`), exactly.

use std::process::Command;

use crate::support::*;

/// The TSC path's allowance: the layout documents well under a
/// microsecond; a test on a loaded machine allows ten.
const TSC_ALLOWANCE_NS: i64 = 10_000;

fn recorded(clock: Option<&str>) -> Vec<(i64, i64, i64)> {
    let name = unique("shm_clock");
    let mut command = Command::new(usertrace());
    command.args(["record", "-e", &name, "--format", "json", "--"]).arg(ut_emit()).args(["clock", &name, "200"]);
    command.env("USERTRACE_TRANSPORT", "shm");
    match clock {
        Some(clock) => command.env("USERTRACE_SHM_CLOCK", clock),
        None => command.env_remove("USERTRACE_SHM_CLOCK"),
    };
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("200 events, 0 lost"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut reads = std::collections::HashMap::new();
    for line in stdout.lines().filter_map(|l| l.strip_prefix("clock ")) {
        let v: Vec<i64> = line.split(' ').map(|f| f.parse().unwrap()).collect();
        reads.insert(v[0], (v[1], v[2]));
    }
    let mut out = Vec::new();
    for line in stdout.lines().filter(|l| l.starts_with("{\"type\":\"event\"")) {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        let i = event["fields"]["i"].as_i64().unwrap();
        let time = event["time_ns"].as_i64().unwrap_or_else(|| panic!("no time_ns in {line}"));
        let (before, after) = reads[&i];
        out.push((before, time, after));
    }
    assert_eq!(out.len(), 200, "{stdout}");
    out
}

#[test]
fn on_the_clock_gettime_path_an_event_s_time_is_between_the_reads() {
    for (before, time, after) in recorded(Some("monotonic")) {
        assert!(before <= time && time <= after, "{before} <= {time} <= {after}");
    }
}

#[test]
fn on_the_tsc_path_an_event_s_time_is_between_the_reads_within_the_conversion_s_error() {
    let events = recorded(None);
    let worst = events.iter().map(|&(before, time, after)| (before - time).max(time - after).max(0)).max().unwrap();
    assert!(worst <= TSC_ALLOWANCE_NS, "an event's time is {worst} ns outside the clock reads around its emit");
    eprintln!("worst distance outside the reads: {worst} ns");
}

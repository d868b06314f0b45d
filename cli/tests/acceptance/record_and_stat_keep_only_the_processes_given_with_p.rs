//! `-p PID` keeps the events of that process only: two producers emit the
//! same event, and `stat --format json -p A` counts A's events, says how
//! many of B's it left out, and `record --format json -p B` prints only
//! B's. Both stop by themselves after `--duration` and exit 0.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

use crate::support::*;

const EMITTED: u64 = 100;

/// A `ut_emit seq` producer, registered and waiting for a tracer.
fn producer(name: &str) -> (Child, u32) {
    let mut child =
        Command::new(ut_emit()).args(["seq", name, &EMITTED.to_string()]).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    let pid = ready.strip_prefix("ready ").unwrap_or_else(|| panic!("{ready}")).trim().parse().unwrap();
    (child, pid)
}

/// Runs `usertrace ARGS` next to two producers of `name`, given A's and
/// B's pids; both producers must have been attached and emitted.
fn beside_two_producers(name: &str, args: impl FnOnce(u32, u32) -> Vec<String>) -> (Output, u32, u32) {
    let (mut a, pid_a) = producer(name);
    let (mut b, pid_b) = producer(name);
    let out = Command::new(usertrace()).args(args(pid_a, pid_b)).output().unwrap();
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success(), "a producer was never attached");
    (out, pid_a, pid_b)
}

#[test]
fn record_and_stat_keep_only_the_processes_given_with_p() {
    let name = unique("pid");
    let (out, _, _) = beside_two_producers(&name, |a, _| {
        ["stat", "-e", &name, "-p", &a.to_string(), "--format", "json", "--duration", "10"].map(String::from).to_vec()
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("{EMITTED} events, 0 lost")), "{stderr}");
    assert!(stderr.contains(&format!("{EMITTED} events of processes not given with -p were left out")), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let stat: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(stat["counts"], serde_json::json!({ format!("user_events:{name}"): EMITTED }), "{stdout}");
    assert_eq!((&stat["events"], &stat["skipped"], &stat["lost"]), (&EMITTED.into(), &EMITTED.into(), &0.into()), "{stdout}");
    assert_eq!((&stat["lost_by_cpu"], &stat["malformed"]), (&serde_json::json!([]), &0.into()), "{stdout}");
    assert!(stat["seconds"].as_f64().unwrap() >= 10.0, "{stdout}");

    let name = unique("pid");
    let (out, pid_a, pid_b) = beside_two_producers(&name, |_, b| {
        ["record", "-e", &name, "--pid", &b.to_string(), "--format=json", "--duration=10"].map(String::from).to_vec()
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Process and exit lines are of B too; the events are checked here.
    assert!(lines.iter().all(|l| l["pid"] == pid_b), "{stdout}");
    let events: Vec<&Value> = lines.iter().filter(|l| l["type"] == "event").collect();
    assert_eq!(events.len() as u64, EMITTED, "{stdout}");
    for (n, e) in events.iter().enumerate() {
        assert_eq!((&e["pid"], &e["event"], &e["fields"]["n"]), (&pid_b.into(), &name.as_str().into(), &n.into()), "{e}");
    }
    assert_ne!(pid_a, pid_b);
}

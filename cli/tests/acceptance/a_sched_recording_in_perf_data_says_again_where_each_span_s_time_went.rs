//! The scheduler's records kept in the perf.data archive: `usertrace
//! record --sched -o FILE.data` over `ut_emit sched` (a 300 ms sleep,
//! 200 ms of CPU, a contended spin and a pipe read that `sh` wakes), then
//! `usertrace report` over that file says again where each span's time
//! went, from the file alone; and `perf script` reads the same scheduler
//! records, naming ut_emit.

use std::process::Command;

use serde_json::Value;

use crate::support::*;

const MS: u64 = 1_000_000;

#[test]
fn a_sched_recording_in_perf_data_says_again_where_each_span_s_time_went() {
    let name = unique("schedarc");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("rec.data");
    let took = record_ut_emit_sched(&name, &data).took;

    let report: Value = serde_json::from_str(&usertrace_ok(&["report", "--format", "json", data.to_str().unwrap()])).unwrap();
    let span = |label: &str| -> &Value {
        let full = format!("{name}_{label}");
        report["spans"].as_array().unwrap().iter().find(|s| s["name"] == full.as_str()).unwrap_or_else(|| panic!("no {full}: {report}"))
    };
    let total = |s: &Value, what: &str| s[what]["total_ns"].as_u64().unwrap_or_else(|| panic!("no {what}: {s}"));
    let sleep = span("sleep_span");
    assert!(total(sleep, "blocked") >= 280 * MS, "{sleep}");
    // A small part of it, not a fixed bound (see record_sched_says_where_
    // each_span_s_time_went): a sleep counted as on-CPU would be 300 ms.
    assert!(total(sleep, "on_cpu") < total(sleep, "blocked") / 4, "{sleep}");
    assert!(total(span("spin_span"), "on_cpu") >= 180 * MS, "{}", span("spin_span"));
    for label in ["sleep_span", "spin_span", "contended_span"] {
        let s = span(label);
        let accounted = total(s, "on_cpu") + total(s, "runnable") + total(s, "blocked");
        assert!(accounted <= took[label], "{label}: {accounted} ns accounted in {} ns: {s}", took[label]);
    }
    let pipe = span("pipe_span");
    let wakers = pipe["top_wakers"].as_array().unwrap_or_else(|| panic!("no top_wakers: {pipe}"));
    assert_eq!(wakers.first().map(|w| &w["process"]), Some(&Value::from("sh")), "{pipe}");

    // perf reads the same records: ut_emit switched out, by name.
    let script = Command::new(perf()).args(["script", "-i"]).arg(&data).output().unwrap();
    assert!(script.status.success(), "perf script: {}", String::from_utf8_lossy(&script.stderr));
    let text = String::from_utf8_lossy(&script.stdout);
    let switches: Vec<&str> = text.lines().filter(|l| l.contains("sched:sched_switch:")).collect();
    assert!(switches.iter().any(|l| l.contains("prev_comm=ut_emit")), "no switch of ut_emit in perf script:\n{text}");
    assert!(text.lines().any(|l| l.contains(&format!("{name}_sleep_span"))), "no span begin in perf script:\n{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

//! `usertrace record --sched`, in the kernel, over four spans that
//! ut_emit times itself with CLOCK_MONOTONIC (`ut_emit sched`): a 300 ms
//! sleep, 200 ms of CPU on a CPU of its own, 400 ms of CPU beside a hog
//! pinned to the same CPU, and a read of a pipe that `sh` writes 200 ms
//! later. `report --format json` over the recording says where each span's
//! time went: blocked for the sleep, on-CPU for the spin, runnable for a
//! good part of the contended one; the pipe's reader was woken by `sh`.
//! The kernel filter keeps the scheduling of ut_emit's threads (and what
//! they forked), not of the whole machine. The recording converted to
//! Perfetto, read with Perfetto's own protos, shows the thread Sleeping
//! inside the sleep's slice.

use std::process::Command;

use serde_json::Value;

use crate::support::*;

const MS: u64 = 1_000_000;

#[test]
fn record_sched_says_where_each_span_s_time_went() {
    let name = unique("sched");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("rec.jsonl");
    // What ut_emit measured itself.
    let SchedRun { took, threads } = record_ut_emit_sched(&name, &jsonl);

    // Scheduler records of ut_emit's threads only: each names one of them
    // (or what they forked: sh, sleep) on one side at least. Its threads
    // are those it listed at its end (its own and the library's, such as
    // the registrar) and the hog it joined before, named as it is.
    let recorded = std::fs::read_to_string(&jsonl).unwrap();
    let lines: Vec<Value> = recorded.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let sleep_begin = format!("{name}_sleep_span");
    let pid = lines.iter().find(|v| v["event"] == sleep_begin.as_str()).unwrap_or_else(|| panic!("no {sleep_begin}: {recorded}"))["pid"].clone();
    let switches: Vec<&Value> = lines.iter().filter(|v| v["type"] == "event" && v["event"] == "sched_switch").collect();
    assert!(switches.len() >= 8, "a few switches at least: {}", switches.len());
    // (ut_emit's own pid may still be named as the recorder that forked
    // it, around its exec.)
    let ours = |comm: &Value, tid: &Value| {
        matches!(comm.as_str(), Some("ut_emit" | "sh" | "sleep")) || tid.as_u64().is_some_and(|tid| threads.contains(&tid))
    };
    for s in &switches {
        let f = &s["fields"];
        assert!(ours(&f["prev_comm"], &f["prev_pid"]) || ours(&f["next_comm"], &f["next_pid"]), "a switch of nobody followed: {s}");
    }
    assert!(switches.iter().any(|s| s["fields"]["prev_pid"] == pid), "ut_emit itself switched out");

    let report = usertrace_ok(&["report", "--format", "json", jsonl.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&report).unwrap();
    let span = |label: &str| -> &Value {
        let full = format!("{name}_{label}");
        report["spans"].as_array().unwrap().iter().find(|s| s["name"] == full.as_str()).unwrap_or_else(|| panic!("no {full}: {report}"))
    };
    let total = |s: &Value, what: &str| s[what]["total_ns"].as_u64().unwrap_or_else(|| panic!("no {what}: {s}"));

    let sleep = span("sleep_span");
    assert!(took["sleep_span"] >= 300 * MS);
    assert!(total(sleep, "blocked") >= 280 * MS, "{sleep}");
    // On a CPU for a small part of it, not a fixed bound: under emulation
    // on a loaded host a span's own begin and end can take 30 ms. A sleep
    // counted as on-CPU would be 300 ms.
    assert!(total(sleep, "on_cpu") < total(sleep, "blocked") / 4, "{sleep}");

    let spin = span("spin_span");
    assert!(total(spin, "on_cpu") >= 180 * MS, "{spin}");

    let contended = span("contended_span");
    let duration = contended["max_ns"].as_u64().unwrap();
    assert!(total(contended, "runnable") * 10 >= duration * 3, "runnable at least 30% of {duration} ns: {contended}");

    // Every figure is within the span's own length as ut_emit timed it.
    for (label, s) in [("sleep_span", sleep), ("spin_span", spin), ("contended_span", contended)] {
        let accounted = total(s, "on_cpu") + total(s, "runnable") + total(s, "blocked");
        assert!(accounted <= took[label], "{label}: {accounted} ns accounted in {} ns: {s}", took[label]);
    }

    let pipe = span("pipe_span");
    let wakers = pipe["top_wakers"].as_array().unwrap_or_else(|| panic!("no top_wakers: {pipe}"));
    assert_eq!(wakers.first().map(|w| &w["process"]), Some(&Value::from("sh")), "{pipe}");

    // The timeline, read with Perfetto's own protos (output/tests/check_pftrace.py
    // rebuilds each thread's states as Perfetto's trace processor does):
    // the span's thread is Sleeping for nearly all of sleep_span.
    let pftrace = dir.join("rec.pftrace");
    usertrace_ok(&["convert", jsonl.to_str().unwrap(), pftrace.to_str().unwrap()]);
    let check = Command::new(perfetto_python()).arg(pftrace_checker()).arg(&pftrace).output().unwrap();
    assert!(check.status.success(), "check_pftrace: {}", String::from_utf8_lossy(&check.stderr));
    let summary: Value = serde_json::from_slice(&check.stdout).unwrap();
    let sleep_name = format!("{name}_sleep_span");
    let slice = summary["slice_states"].as_array().unwrap().iter().find(|s| s["name"] == sleep_name.as_str()).unwrap_or_else(|| panic!("no {sleep_name} slice: {}", summary["slice_states"]));
    let sleeping = slice["states"]["Sleeping"].as_u64().unwrap_or(0);
    assert!(sleeping >= 280 * MS, "the thread Sleeping {sleeping} ns inside sleep_span: {slice}");
    // The pipe's waker, which emits nothing, has a thread track under its
    // name, so that Perfetto names the waker of that wakeup.
    let waker = &wakers[0];
    let named = summary["threads"].as_array().unwrap().iter().find(|t| t["tid"] == waker["tid"]);
    assert_eq!(named.map(|t| (&t["pid"], &t["name"])), Some((&waker["pid"], &waker["thread"])), "{waker}: {}", summary["threads"]);
    let _ = std::fs::remove_dir_all(&dir);
}

//! One recording of nested, cross-thread and unfinished spans, kept as
//! JSON lines and converted to a Perfetto trace, a Chrome trace and a
//! report. The Perfetto file is read by Perfetto's own message definitions
//! (PyPI `perfetto`, through output/tests/check_pftrace.py), not by ours.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::support::*;

struct Recorded {
    pid: u32,
    child: u32,
    dir: PathBuf,
    name: String,
}

fn record_spans() -> Recorded {
    let name = unique("tl");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("rec.jsonl");
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}_*"), "-o"])
        .arg(&jsonl)
        .arg("--")
        .arg(ut_emit())
        .args(["spans", &name])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ids: HashMap<&str, u32> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("spans "))
        .expect("ut_emit printed its span ids")
        .split(' ')
        .map(|kv| kv.split_once('=').unwrap())
        .filter(|(k, _)| *k == "child")
        .map(|(k, v)| (k, v.parse().unwrap()))
        .collect();
    let pid = stdout.lines().find_map(|l| l.strip_prefix("ready ")).unwrap().trim().parse().unwrap();
    Recorded { pid, child: ids["child"], dir, name }
}

fn arg<'a>(item: &'a Value, name: &str) -> &'a Value {
    item["args"].get(name).unwrap_or_else(|| panic!("no arg {name} in {item}"))
}

#[test]
fn spans_and_fields_reach_perfetto_chrome_and_the_report_exactly() {
    let r = record_spans();
    let (pid, child, name) = (r.pid, r.child, r.name.as_str());
    let jsonl = r.dir.join("rec.jsonl");
    let pftrace = r.dir.join("rec.pftrace");
    let chrome = r.dir.join("rec.json");
    usertrace_ok(&["convert", jsonl.to_str().unwrap(), pftrace.to_str().unwrap()]);
    usertrace_ok(&["convert", jsonl.to_str().unwrap(), chrome.to_str().unwrap()]);

    // Perfetto, through Perfetto's own decoder.
    let out = Command::new(perfetto_python()).arg(pftrace_checker()).arg(&pftrace).output().unwrap();
    assert!(out.status.success(), "check_pftrace: {}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();

    let process = summary["processes"].as_array().unwrap().iter().find(|p| p["pid"] == pid).expect("our process has a track");
    assert!(process["name"].as_str().unwrap().contains("ut_emit"), "{process}");
    assert_eq!(process["cmdline"][1], "spans", "{process}");
    let threads = summary["threads"].as_array().unwrap();
    let thread_name = |tid: u32| threads.iter().find(|t| t["tid"] == tid).map(|t| t["name"].as_str().unwrap().to_owned());
    assert_eq!(thread_name(pid).as_deref(), Some("ut_emit"));
    assert_eq!(thread_name(child).as_deref(), Some("ut_span_child"));

    let slices = summary["slices"].as_array().unwrap();
    let on = |track: &str| slices.iter().filter(|s| s["track"] == track).collect::<Vec<_>>();
    let main = on(&format!("thread:{pid}"));
    let names: Vec<(&str, u64)> = main.iter().map(|s| (s["name"].as_str().unwrap(), s["depth"].as_u64().unwrap())).collect();
    let (outer, inner) = (format!("{name}_outer"), format!("{name}_inner"));
    assert_eq!(names, vec![(outer.as_str(), 0), (inner.as_str(), 1)], "nesting on the main thread");
    assert_eq!(arg(main[0], "request_id"), &serde_json::json!({"uint": 5_000_000_000u64}));
    assert_eq!(arg(main[0], "label"), &serde_json::json!({"string": "héllo ✓"}));
    assert_eq!(arg(main[1], "depth"), &serde_json::json!({"int": -7}));
    assert_eq!(arg(main[1], "ratio"), &serde_json::json!({"double": 0.25}));
    let (outer_ts, outer_end) = (main[0]["ts"].as_u64().unwrap(), main[0]["ts"].as_u64().unwrap() + main[0]["dur"].as_u64().unwrap());
    let (inner_ts, inner_end) = (main[1]["ts"].as_u64().unwrap(), main[1]["ts"].as_u64().unwrap() + main[1]["dur"].as_u64().unwrap());
    assert!(outer_ts <= inner_ts && inner_end <= outer_end, "inner lies within outer");

    let note = summary["instants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == format!("{name}_note"))
        .expect("the note is an instant");
    assert_eq!(note["track"], format!("thread:{pid}"));
    let ts = note["ts"].as_u64().unwrap();
    assert!(inner_ts <= ts && ts <= inner_end, "the note was emitted inside inner");
    assert_eq!(arg(note, "big"), &serde_json::json!({"uint": u64::MAX - 5}));
    assert_eq!(arg(note, "negative"), &serde_json::json!({"int": -42}));
    assert_eq!(arg(note, "text"), &serde_json::json!({"string": "日本語 ✓"}));
    assert_eq!(arg(note, "ratio"), &serde_json::json!({"double": -2.5}));

    // Ended on another thread: a process-level async track.
    let handoff: Vec<_> = slices.iter().filter(|s| s["name"] == format!("{name}_handoff")).collect();
    assert_eq!(handoff.len(), 1, "{slices:#?}");
    assert!(handoff[0]["track"].as_str().unwrap().starts_with(&format!("async:{pid}:")), "{}", handoff[0]);
    // Open when its process exited: closed there, and marked.
    let orphaned: Vec<_> = slices.iter().filter(|s| s["name"] == format!("{name}_orphaned")).collect();
    assert_eq!(orphaned.len(), 1, "{slices:#?}");
    assert_eq!(orphaned[0]["track"], format!("thread:{child}"));
    assert_eq!(arg(orphaned[0], "unfinished"), &serde_json::json!({"string": "process exited"}));

    // Chrome's Trace Event Format.
    let trace: Value = serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let mut open_async: HashMap<String, u32> = HashMap::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap();
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
        if ph != "M" {
            assert!(e["ts"].is_number(), "{e}");
        }
        match ph {
            "X" => assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}"),
            "b" => *open_async.entry(format!("{}", e["id"])).or_default() += 1,
            "e" => *open_async.entry(format!("{}", e["id"])).or_default() -= 1,
            "i" | "M" => {}
            other => panic!("unexpected ph {other}: {e}"),
        }
    }
    assert!(open_async.values().all(|&n| n == 0), "every async begin has its end: {open_async:?}");
    let x_outer = events.iter().find(|e| e["ph"] == "X" && e["name"] == outer.as_str()).expect("outer is an X event");
    assert_eq!(x_outer["pid"], pid);
    assert_eq!(x_outer["args"]["request_id"], 5_000_000_000u64);
    // ts in µs, with the nanoseconds kept as decimals.
    assert_eq!((x_outer["ts"].as_f64().unwrap() * 1000.0).round() as u64, outer_ts);

    // The report.
    let report: Value = serde_json::from_str(&usertrace_ok(&["report", jsonl.to_str().unwrap(), "--format", "json"])).unwrap();
    let span_count = |n: &str| report["spans"].as_array().unwrap().iter().find(|s| s["name"] == n).map(|s| (s["count"].clone(), s["unfinished"].clone()));
    assert_eq!(span_count(&outer), Some((1.into(), 0.into())));
    assert_eq!(span_count(&inner), Some((1.into(), 0.into())));
    assert_eq!(span_count(&format!("{name}_orphaned")).map(|c| c.1), Some(1.into()));
    assert_eq!(report["lost_events"], 0);
    let _ = std::fs::remove_dir_all(&r.dir);
}

#[test]
fn record_writes_a_perfetto_file_directly_that_perfetto_reads() {
    let name = unique("tl_direct");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let pftrace = dir.join("direct.pftrace");
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}_*"), "--report", "-o"])
        .arg(&pftrace)
        .arg("--")
        .arg(ut_emit())
        .args(["spans", &name])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("{name}_outer")), "the report names the spans: {stdout}");
    let check = Command::new(perfetto_python()).arg(pftrace_checker()).arg(&pftrace).output().unwrap();
    assert!(check.status.success(), "check_pftrace: {}", String::from_utf8_lossy(&check.stderr));
    let summary: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(summary["slices"].as_array().unwrap().iter().filter(|s| s["name"] == format!("{name}_outer")).count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn events_lost_inside_a_span_are_marked_inside_it_and_the_span_still_closes() {
    let name = unique("tl_lost");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let (jsonl, pftrace) = (dir.join("lost.jsonl"), dir.join("lost.pftrace"));
    let emitted = 50_000u64;
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}_*"), "--buffer-size", "1", "-o"])
        .arg(&jsonl)
        .arg("--")
        .arg(ut_emit())
        .args(["span-flood", &name, &emitted.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    usertrace_ok(&["convert", jsonl.to_str().unwrap(), pftrace.to_str().unwrap()]);
    let check = Command::new(perfetto_python()).arg(pftrace_checker()).arg(&pftrace).output().unwrap();
    assert!(check.status.success(), "check_pftrace: {}", String::from_utf8_lossy(&check.stderr));
    let summary: Value = serde_json::from_slice(&check.stdout).unwrap();

    let flood: Vec<_> = summary["slices"].as_array().unwrap().iter().filter(|s| s["name"] == format!("{name}_flood")).collect();
    assert_eq!(flood.len(), 1, "one flood span");
    assert!(flood[0]["args"].get("unfinished").is_none(), "its end arrived: {}", flood[0]);
    let (start, end) = (flood[0]["ts"].as_u64().unwrap(), flood[0]["ts"].as_u64().unwrap() + flood[0]["dur"].as_u64().unwrap());
    let lost = summary["lost"].as_array().unwrap();
    assert!(!lost.is_empty(), "a one-page ring kept up with {emitted} events: no loss to show");
    assert!(
        lost.iter().any(|l| (start..=end).contains(&l.get("ts").and_then(Value::as_u64).unwrap())),
        "a loss is marked within the span [{start}, {end}]: {lost:?}"
    );

    // What arrived and what was lost add up to what was emitted.
    let report: Value = serde_json::from_str(&usertrace_ok(&["report", jsonl.to_str().unwrap(), "--format", "json"])).unwrap();
    let ticks = report["events"].as_array().unwrap().iter().find(|e| e["name"] == format!("{name}_tick")).unwrap()["count"].as_u64().unwrap();
    assert_eq!(ticks + report["lost_events"].as_u64().unwrap(), emitted, "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_span_begun_before_exec_and_ended_by_the_new_program_is_one_slice_under_the_new_name() {
    let name = unique("tl_exec");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let (jsonl, pftrace) = (dir.join("exec.jsonl"), dir.join("exec.pftrace"));
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}_*"), "-o"])
        .arg(&jsonl)
        .arg("--")
        .arg(ut_emit())
        .args(["span-exec", &name])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let pid: u32 = stdout.lines().find_map(|l| l.strip_prefix("ready ")).expect("ut_emit said ready").trim().parse().unwrap();
    usertrace_ok(&["convert", jsonl.to_str().unwrap(), pftrace.to_str().unwrap()]);
    let check = Command::new(perfetto_python()).arg(pftrace_checker()).arg(&pftrace).output().unwrap();
    assert!(check.status.success(), "check_pftrace: {}", String::from_utf8_lossy(&check.stderr));
    let summary: Value = serde_json::from_slice(&check.stdout).unwrap();

    // The process is named by the program it exec'd, with that program's
    // command line.
    let copy = format!("ut_exec_copy_{pid}");
    let process = summary["processes"].as_array().unwrap().iter().find(|p| p["pid"] == pid).expect("the process has a track");
    assert_eq!(process["name"], copy.as_str(), "{process}");
    assert_eq!(process["cmdline"][1], "span-exec-target", "{process}");
    let thread = summary["threads"].as_array().unwrap().iter().find(|t| t["tid"] == pid).expect("its thread has a track");
    assert_eq!(thread["name"], &copy[..15], "the thread's comm after exec (15 bytes)");

    // The span the old program began and the new one ended is one slice
    // on the thread, holding the new program's own span.
    let slices: Vec<_> = summary["slices"].as_array().unwrap().iter().filter(|s| s["track"] == format!("thread:{pid}")).collect();
    let names: Vec<(&str, u64)> = slices.iter().map(|s| (s["name"].as_str().unwrap(), s["depth"].as_u64().unwrap())).collect();
    let (across, after) = (format!("{name}_across_exec"), format!("{name}_after_exec"));
    assert_eq!(names, vec![(across.as_str(), 0), (after.as_str(), 1)], "{slices:#?}");
    assert_eq!(arg(slices[0], "step"), &serde_json::json!({"uint": 1}));
    assert_eq!(arg(slices[1], "step"), &serde_json::json!({"uint": 2}));
    for slice in &slices {
        assert!(slice["args"].get("unfinished").is_none(), "its end arrived: {slice}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

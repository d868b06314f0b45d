//! A trace written by `usertrace_output::perfetto` is read by Perfetto's
//! own message definitions (PyPI `perfetto`, through check_pftrace.py),
//! which find every track, name, nesting and typed arg where we put them,
//! and in a recording with scheduler records (`record --sched`) the
//! thread's states under its slices: Sleeping inside a span that slept.
//!
//! Needs a Python with `perfetto` and `protobuf`: the one named by
//! USERTRACE_PERFETTO_PYTHON, else `python3` if it has them. Under CI
//! (`CI` set) USERTRACE_PERFETTO_PYTHON must be set, so the check is never
//! skipped there unnoticed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value as Json};
use usertrace_output::timeline::TimelineStream;
use usertrace_output::{perfetto, EventRecord, ExitRecord, LostRecord, ProcessRecord, Record, Timeline, Value};

const IMPORT: &str = "from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace";

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("USERTRACE_PERFETTO_PYTHON") {
        return Some(PathBuf::from(p));
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but USERTRACE_PERFETTO_PYTHON is not: install `perfetto` and `protobuf` in a venv and point it at its python"
    );
    let found = Command::new("python3").args(["-c", IMPORT]).output().is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: python3 cannot import perfetto; set USERTRACE_PERFETTO_PYTHON to a python that can");
    }
    found.then(|| PathBuf::from("python3"))
}

fn event(t: u64, pid: u32, tid: u32, name: &str, fields: Vec<(&str, Value)>) -> Record {
    on_cpu(0, t, pid, tid, name, fields)
}

fn on_cpu(cpu: u32, t: u64, pid: u32, tid: u32, name: &str, fields: Vec<(&str, Value)>) -> Record {
    Record::Event(EventRecord {
        time_ns: t,
        cpu,
        pid,
        tid,
        comm: if tid == pid { "main".into() } else { format!("worker-{tid}") },
        process: "srv".into(),
        namespaces: None,
        event: name.into(),
        tracepoint: None,
        fields: fields.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
        error: None,
        stack: Vec::new(),
    })
}

fn recording() -> Vec<Record> {
    vec![
        Record::Process(ProcessRecord {
            time_ns: 100,
            pid: 40,
            executable: Some("/usr/bin/server".into()),
            command_line: Some(vec!["server".into(), "--port=80".into()]),
            container_id: None,
            resource: Default::default(),
            pod_uid: None,
            pid_in_container: None,
        }),
        event(1_000, 40, 41, "request", vec![("span_begin", Value::Unsigned(1)), ("path", Value::Str("/é".into()))]),
        event(1_100, 40, 41, "parse", vec![("span_begin", Value::Unsigned(2))]),
        event(
            1_150,
            40,
            41,
            "note",
            vec![
                ("u", Value::Unsigned(u64::MAX)),
                ("i", Value::Signed(-3)),
                ("f", Value::F64(0.25)),
                ("b", Value::Bool(true)),
                // An EventHeader event's array and struct.
                ("arr", Value::Array(vec![Value::Unsigned(1), Value::Str("two".into())])),
                ("pt", Value::Struct(vec![("x".into(), Value::Signed(-7)), ("inner".into(), Value::Struct(vec![("y".into(), Value::Bool(false))]))])),
            ],
        ),
        event(1_200, 40, 41, "parse", vec![("span_end", Value::Unsigned(2))]),
        event(1_300, 40, 41, "handoff", vec![("span_begin", Value::Unsigned(3))]),
        event(1_400, 40, 42, "handoff", vec![("span_end", Value::Unsigned(3)), ("error", Value::Str("timeout".into()))]),
        event(1_500, 40, 41, "request", vec![("span_end", Value::Unsigned(1))]),
        Record::Lost(LostRecord { time_ns: 1_600, cpu: 1, count: 12, sideband: false }),
        event(1_700, 40, 40, "gc", vec![("span_start_ns", Value::Unsigned(1_650)), ("span_duration_ns", Value::Unsigned(20))]),
        event(1_800, 40, 41, "open", vec![("span_begin", Value::Unsigned(9))]),
        Record::Exit(ExitRecord { time_ns: 1_900, pid: 40, tid: 40 }),
    ]
}

/// What check_pftrace.py makes of the trace of `records`, written by
/// `write` (the whole-timeline writer, or the streaming one).
fn checked(python: &Path, name: &str, write: impl FnOnce(&Path)) -> Json {
    let path = std::env::temp_dir().join(format!("usertrace-check-{name}-{}.pftrace", std::process::id()));
    write(&path);
    let checker = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_pftrace.py");
    let out = Command::new(python).arg(&checker).arg(&path).output().unwrap_or_else(|e| panic!("running {}: {e}", python.display()));
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "check_pftrace.py failed: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn perfetto_trace_passes_perfettos_own_checker() {
    let Some(python) = python() else { return };
    let summary = checked(&python, "plain", |path| perfetto::write_file(path, &Timeline::build(&recording())).unwrap());
    assert_eq!(summary["processes"], json!([{"pid": 40, "name": "server", "cmdline": ["server", "--port=80"]}]));
    assert_eq!(
        summary["threads"],
        json!([{"pid": 40, "tid": 40, "name": "main"}, {"pid": 40, "tid": 41, "name": "worker-41"}, {"pid": 40, "tid": 42, "name": "worker-42"}])
    );
    assert_eq!(
        summary["slices"],
        json!([
            {"track": "async:40:spans", "depth": 0, "name": "handoff", "ts": 1300, "dur": 100, "args": {"error": {"string": "timeout"}}},
            {"track": "async:40:spans", "depth": 0, "name": "gc", "ts": 1650, "dur": 20, "args": {}},
            {"track": "thread:41", "depth": 0, "name": "request", "ts": 1000, "dur": 500, "args": {"path": {"string": "/é"}}},
            {"track": "thread:41", "depth": 1, "name": "parse", "ts": 1100, "dur": 100, "args": {}},
            {"track": "thread:41", "depth": 0, "name": "open", "ts": 1800, "dur": 100, "args": {"unfinished": {"string": "process exited"}}},
        ])
    );
    assert_eq!(
        summary["instants"],
        json!([{"track": "thread:41", "depth": 2, "name": "note", "ts": 1150,
                "args": {"u": {"uint": u64::MAX}, "i": {"int": -3}, "f": {"double": 0.25}, "b": {"bool": true},
                         "arr": {"array": [{"uint": 1}, {"string": "two"}]},
                         "pt": {"dict": {"x": {"int": -7}, "inner": {"dict": {"y": {"bool": false}}}}}}}])
    );
    assert_eq!(summary["lost"], json!([{"ts": 1600, "name": "lost 12 events on cpu 1"}]));
    assert_eq!(summary["ftrace"], json!([]), "no scheduler records, no ftrace events");
}

/// A kernel `sched_switch` on `cpu`, in the context of the task switched
/// out (`prev`, of process `prev_pid`).
fn switch(cpu: u32, t: u64, (prev_pid, prev): (u32, u32), prev_state: i64, next: u32) -> Record {
    let comm = |tid: u32| Value::Str(if tid == 0 { "swapper/0".into() } else { format!("task-{tid}") });
    on_cpu(
        cpu,
        t,
        prev_pid,
        prev,
        "sched_switch",
        vec![
            ("prev_comm", comm(prev)),
            ("prev_pid", Value::Signed(i64::from(prev))),
            ("prev_prio", Value::Signed(120)),
            ("prev_state", Value::Signed(prev_state)),
            ("next_comm", comm(next)),
            ("next_pid", Value::Signed(i64::from(next))),
            ("next_prio", Value::Signed(120)),
        ],
    )
}

/// Thread 41 of process 40 sleeps in `sleep_span` [1000, 5000): switched
/// out asleep (S) at 2000, woken by thread 42 on cpu 1 at 4000, on cpu 0
/// at 4100, preempted (R+) by a hog at 4500, back at 4700. Thread 42's
/// `spin` span runs on cpu 1 from its first switch-in.
fn sleeping() -> Vec<Record> {
    const S: i64 = 0x1;
    const PREEMPTED: i64 = 0x100;
    vec![
        event(1_000, 40, 41, "sleep_span", vec![("span_begin", Value::Unsigned(1))]),
        switch(0, 2_000, (40, 41), S, 0),
        switch(1, 2_500, (0, 0), 0, 42),
        on_cpu(1, 2_600, 40, 42, "spin", vec![("span_begin", Value::Unsigned(2))]),
        on_cpu(
            1,
            4_000,
            40,
            42,
            "sched_waking",
            vec![("comm", Value::Str("worker-41".into())), ("pid", Value::Signed(41)), ("prio", Value::Signed(120)), ("target_cpu", Value::Signed(0))],
        ),
        switch(0, 4_100, (0, 0), 0, 41),
        switch(0, 4_500, (40, 41), PREEMPTED, 77),
        switch(0, 4_700, (77, 77), PREEMPTED, 41),
        event(5_000, 40, 41, "sleep_span", vec![("span_end", Value::Unsigned(1))]),
        on_cpu(1, 5_000, 40, 42, "spin", vec![("span_end", Value::Unsigned(2))]),
    ]
}

#[test]
fn a_trace_with_scheduler_records_shows_the_spans_thread_sleeping_inside_the_span() {
    let Some(python) = python() else { return };
    let whole = checked(&python, "sched", |path| perfetto::write_file(path, &Timeline::build(&sleeping())).unwrap());
    let streamed = checked(&python, "sched-streamed", |path| {
        let mut stream = TimelineStream::in_memory();
        for r in sleeping() {
            stream.push(&r).unwrap();
        }
        let mut out = std::fs::File::create(path).unwrap();
        perfetto::write(stream.finish().unwrap(), &mut out).unwrap();
    });
    assert_eq!(streamed, whole, "the streaming writer writes what the whole-timeline one does");
    let summary = whole;
    // Every switch and the waking parse with Perfetto's own protos, per cpu
    // in time order, on the track events' clock.
    let events: Vec<(u64, u64, u64, &str)> = summary["ftrace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["cpu"].as_u64().unwrap(), e["ts"].as_u64().unwrap(), e["pid"].as_u64().unwrap(), e["event"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        [
            (0, 2_000, 41, "sched_switch"),
            (0, 4_100, 0, "sched_switch"),
            (0, 4_500, 41, "sched_switch"),
            (0, 4_700, 77, "sched_switch"),
            (1, 2_500, 0, "sched_switch"),
            (1, 4_000, 42, "sched_waking"),
        ]
    );
    assert_eq!(
        summary["ftrace"][0]["fields"],
        json!({"prev_comm": "task-41", "prev_pid": 41, "prev_prio": 120, "prev_state": 1, "next_comm": "swapper/0", "next_pid": 0, "next_prio": 120})
    );
    // The span's slice is on the track of the thread whose states these are;
    // the task switched out for it (77), which emits nothing, has a track of
    // its own under the name it was recorded with, so that Perfetto names it.
    assert_eq!(
        summary["threads"],
        json!([{"pid": 40, "tid": 41, "name": "worker-41"}, {"pid": 40, "tid": 42, "name": "worker-42"}, {"pid": 77, "tid": 77, "name": "main"}])
    );
    let states: Vec<Json> = summary["thread_states"].as_array().unwrap().iter().filter(|s| s["tid"] == 41).cloned().collect();
    assert_eq!(
        states,
        [
            json!({"tid": 41, "ts": 2_000, "dur": 2_000, "state": "S", "name": "Sleeping", "waker_tid": null}),
            json!({"tid": 41, "ts": 4_000, "dur": 100, "state": "R", "name": "Runnable", "waker_tid": 42}),
            json!({"tid": 41, "ts": 4_100, "dur": 400, "state": "Running", "name": "Running", "waker_tid": null}),
            json!({"tid": 41, "ts": 4_500, "dur": 200, "state": "R+", "name": "Runnable (Preempted)", "waker_tid": null}),
            json!({"tid": 41, "ts": 4_700, "dur": null, "state": "Running", "name": "Running", "waker_tid": null}),
        ]
    );
    // The test: Sleeping (S at a switch-out, no switch-in until the
    // waking) inside sleep_span's time, and most of it.
    let sleep_span = summary["slice_states"].as_array().unwrap().iter().find(|s| s["name"] == "sleep_span").unwrap();
    assert_eq!((&sleep_span["track"], &sleep_span["ts"], &sleep_span["dur"]), (&json!("thread:41"), &json!(1_000), &json!(4_000)));
    assert_eq!(sleep_span["states"], json!({"Sleeping": 2_000, "Runnable": 100, "Running": 700, "Runnable (Preempted)": 200}));
    let spin = summary["slice_states"].as_array().unwrap().iter().find(|s| s["name"] == "spin").unwrap();
    assert_eq!(spin["states"], json!({"Running": 2_400}));
}

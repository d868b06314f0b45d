//! A trace written by `usertrace_output::perfetto` is read by Perfetto's
//! own message definitions (PyPI `perfetto`, through check_pftrace.py),
//! which find every track, name, nesting and typed arg where we put them.
//!
//! Needs a Python with `perfetto` and `protobuf`: the one named by
//! USERTRACE_PERFETTO_PYTHON, else `python3` if it has them. Under CI
//! (`CI` set) USERTRACE_PERFETTO_PYTHON must be set, so the check is never
//! skipped there unnoticed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value as Json};
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
    Record::Event(EventRecord {
        time_ns: t,
        cpu: 0,
        pid,
        tid,
        comm: if tid == pid { "main".into() } else { format!("worker-{tid}") },
        process: "srv".into(),
        namespaces: None,
        event: name.into(),
        fields: fields.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
        error: None,
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
        }),
        event(1_000, 40, 41, "request", vec![("span_begin", Value::Unsigned(1)), ("path", Value::Str("/é".into()))]),
        event(1_100, 40, 41, "parse", vec![("span_begin", Value::Unsigned(2))]),
        event(1_150, 40, 41, "note", vec![("u", Value::Unsigned(u64::MAX)), ("i", Value::Signed(-3)), ("f", Value::F64(0.25)), ("b", Value::Bool(true))]),
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

#[test]
fn perfetto_trace_passes_perfettos_own_checker() {
    let Some(python) = python() else { return };
    let path = std::env::temp_dir().join(format!("usertrace-check-{}.pftrace", std::process::id()));
    perfetto::write_file(&path, &Timeline::build(&recording())).unwrap();
    let checker = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_pftrace.py");
    let out = Command::new(&python).arg(&checker).arg(&path).output().unwrap_or_else(|e| panic!("running {}: {e}", python.display()));
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "check_pftrace.py failed: {stderr}");
    let summary: Json = serde_json::from_slice(&out.stdout).unwrap();
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
                "args": {"u": {"uint": u64::MAX}, "i": {"int": -3}, "f": {"double": 0.25}, "b": {"bool": true}}}])
    );
    assert_eq!(summary["lost"], json!([{"ts": 1600, "name": "lost 12 events on cpu 1"}]));
}

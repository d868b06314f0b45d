//! `usertrace list --format json` prints one JSON object per registered
//! event, with its fields in declaration order and who uses it, and the
//! same events as the text listing. Runs on any host: the tracefs it reads
//! is a scratch directory laid out as the kernel lays out its own.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn list_prints_each_event_as_one_json_line() {
    let dir = std::env::temp_dir().join(format!("usertrace-list-json-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // status() opens this read-write: a plain file stands in for the device.
    write(&dir.join("user_events_data"), "");
    write(&dir.join("user_events_status"), "ut_ping # Used by ftrace perf\nut_pong\n\nActive: 2\nBusy: 1\nMax: 32768\n");
    write(
        &dir.join("events/user_events/ut_ping/format"),
        "name: ut_ping\nID: 1501\nformat:\n\
         \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
         \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
         \tfield:u32 n;\toffset:8;\tsize:4;\tsigned:0;\n\
         \tfield:__rel_loc char msg[];\toffset:12;\tsize:4;\tsigned:1;\n",
    );
    write(&dir.join("events/user_events/ut_pong/format"), "name: ut_pong\nID: 1502\nformat:\n\tfield:s64 t;\toffset:8;\tsize:8;\tsigned:1;\n");

    let list = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_usertrace")).arg("list").args(args).env("USERTRACE_TRACEFS", &dir).output().unwrap();
    // The pattern keeps out tracepoints that programs running on this host
    // registered in shared memory, which every listing shows too.
    let out = list(&["--format", "json", "ut_p?ng"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(
        lines,
        [
            json!({
                "event": "user_events:ut_ping", "system": "user_events", "name": "ut_ping", "id": 1501,
                "fields": [{"name": "n", "type": "u32"}, {"name": "msg", "type": "__rel_loc char"}],
                "used_by": ["ftrace", "perf"], "transport": "user_events", "pids": [],
            }),
            json!({
                "event": "user_events:ut_pong", "system": "user_events", "name": "ut_pong", "id": 1502,
                "fields": [{"name": "t", "type": "s64"}],
                "used_by": [], "transport": "user_events", "pids": [],
            }),
        ]
    );
    // Keys in the documented order, as a person reading the line sees them.
    assert!(stdout.starts_with("{\"event\":\"user_events:ut_ping\",\"system\":\"user_events\",\"name\":\"ut_ping\",\"id\":1501,\"fields\":[{\"name\":\"n\",\"type\":\"u32\"}"), "{stdout}");

    let out = list(&["ut_p?ng"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "user_events:ut_ping  (used by ftrace perf)\n    u32 n\n    __rel_loc char msg\nuser_events:ut_pong  (not traced)\n    s64 t\n"
    );

    let out = list(&["--format=json", "ut_pong"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);

    let out = list(&["--format", "json", "ut_nobody"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no user event matches \"ut_nobody\""));
    std::fs::remove_dir_all(&dir).unwrap();
}

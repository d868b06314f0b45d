//! `usertrace list` shows a tracepoint registered in shared memory with
//! its fields in order and the process that has it, and not once the
//! process is gone.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::*;

#[test]
fn list_shows_a_tracepoint_in_shared_memory_with_its_fields_and_process() {
    let name = unique("shm_list");
    // `all` registers its event and then waits for a recorder.
    let mut producer = Command::new(ut_emit()).args(["all", &name]).env("USERTRACE_TRANSPORT", "shm").stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = String::new();
    BufReader::new(producer.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    let list = || Command::new(usertrace()).args(["list", "--format", "json", &name]).output().unwrap();
    let out = list();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let listed: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let fields: Vec<(&str, &str)> = [
        ("u8v", "u8"), ("u16v", "u16"), ("u32v", "u32"), ("u64v", "u64"), ("i8v", "s8"), ("i16v", "s16"), ("i32v", "s32"),
        ("i64v", "s64"), ("flag", "unsigned char"), ("f32v", "struct f32"), ("f64v", "struct f64"), ("arr", "char"),
        ("msg", "__rel_loc char"), ("blob", "__rel_loc u8"),
    ]
    .into();
    assert_eq!(
        listed,
        [json!({
            "event": format!("user_events:{name}"), "system": "user_events", "name": name, "id": 0,
            "fields": fields.iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>(),
            "used_by": [], "transport": "shm", "pids": [producer.id()],
        })],
        "{stdout}"
    );
    producer.kill().unwrap();
    producer.wait().unwrap();
    let out = list();
    assert_eq!(out.status.code(), Some(1), "an exact name nobody has registered: {}", String::from_utf8_lossy(&out.stdout));
}

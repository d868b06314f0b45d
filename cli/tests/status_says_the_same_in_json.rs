//! `usertrace status --format json` tells what the text does, as one JSON
//! object with a fixed word for the verdict, and the same exit status.
//! Runs on any host: the tracefs it looks at is a scratch directory.

use std::process::Command;

use serde_json::Value;

#[test]
fn status_says_the_same_in_json() {
    let dir = std::env::temp_dir().join(format!("usertrace-status-json-test-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("events")).unwrap();
    let status = |format: &str| {
        Command::new(env!("CARGO_BIN_EXE_usertrace")).args(["status", "--format", format]).env("USERTRACE_TRACEFS", &dir).output().unwrap()
    };
    let out = status("json");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["tracefs"], dir.display().to_string());
    assert_eq!(v["tried"][0], dir.display().to_string());
    assert_eq!(v["user_events"]["available"], false);
    assert_eq!(v["user_events"]["state"], "user_events_missing");
    assert!(v["user_events"]["message"].as_str().unwrap().contains("CONFIG_USER_EVENTS"), "{stdout}");
    assert!(v["kernel"].is_string() && v["recording"]["cap_perfmon"].is_boolean(), "{stdout}");
    // No user_events_data in that tracefs: programs take shared memory,
    // which perf's task records and ptrace rights suffice to record.
    assert_eq!(v["transport"]["name"], "shm", "{stdout}");
    assert!(v["transport"]["reason"].as_str().unwrap().contains("(user_events_missing)"), "{stdout}");
    assert!(v["recording"]["message"].as_str().unwrap().contains("shared memory"), "{stdout}");
    let word = v["kernel_config"]["user_events"].as_str().unwrap();
    assert!(["y", "not_set", "absent", "unreadable"].contains(&word), "{stdout}");
    assert_eq!(v["kernel_config"]["source"].is_null(), word == "unreadable", "{stdout}");
    assert_eq!(v["kernel_config"]["tried"][0], "/proc/config.gz");

    // The text says the same verdict, first, and the same recording message.
    let text = String::from_utf8(status("text").stdout).unwrap();
    assert_eq!(text.lines().next(), Some(format!("user_events:  {}", v["user_events"]["message"].as_str().unwrap()).as_str()), "{text}");
    assert!(text.contains(&format!("\nrecording:    {}\n", v["recording"]["message"].as_str().unwrap())), "{text}");
    let config_line = text.lines().find_map(|l| l.strip_prefix("config:       ")).unwrap();
    match v["kernel_config"]["source"].as_str() {
        Some(source) => assert!(config_line.starts_with(&format!("{source}: ")), "{text}"),
        None => assert!(config_line.starts_with("unreadable (tried /proc/config.gz"), "{text}"),
    }

    std::fs::write(dir.join("user_events_data"), "").unwrap();
    let out = status("json");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!((&v["user_events"]["available"], &v["user_events"]["state"]), (&Value::Bool(true), &Value::from("available")));
    std::fs::remove_dir_all(&dir).unwrap();
}

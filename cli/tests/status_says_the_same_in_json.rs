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
    assert!(v["user_events"]["message"].as_str().unwrap().contains("lacks CONFIG_USER_EVENTS"), "{stdout}");
    assert!(v["kernel"].is_string() && v["recording"]["allowed"].is_boolean() && v["recording"]["cap_perfmon"].is_boolean(), "{stdout}");

    // The text says the same verdict and recording message.
    let text = String::from_utf8(status("text").stdout).unwrap();
    assert!(text.contains(v["user_events"]["message"].as_str().unwrap()), "{text}");
    assert!(text.contains(&format!("recording:    {}", v["recording"]["message"].as_str().unwrap())), "{text}");

    std::fs::write(dir.join("user_events_data"), "").unwrap();
    let out = status("json");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!((&v["user_events"]["available"], &v["user_events"]["state"]), (&Value::Bool(true), &Value::from("available")));
    std::fs::remove_dir_all(&dir).unwrap();
}

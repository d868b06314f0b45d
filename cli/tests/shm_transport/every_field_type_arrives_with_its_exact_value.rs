//! Every field type, written into shared memory, comes out of `record
//! --format json` with exactly the value the program gave.

use std::process::Command;

use crate::support::*;

#[test]
fn every_field_type_arrives_with_its_exact_value() {
    let name = unique("shm_all");
    let out = Command::new(usertrace())
        .args(["record", "-e", &name, "--format", "json", "--"])
        .arg(ut_emit())
        .args(["all", &name])
        .env("USERTRACE_TRANSPORT", "shm")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("1 events, 0 lost"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let line = stdout.lines().find(|l| l.starts_with("{\"type\":\"event\"")).unwrap_or_else(|| panic!("no event in {stdout}"));
    let event: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(event["event"], name.as_str());
    assert_eq!((&event["comm"], &event["process"]), (&"ut_emit".into(), &"ut_emit".into()), "{line}");
    let fields = &event["fields"];
    let expected = serde_json::json!({
        "u8v": 250, "u16v": 65000, "u32v": 4_000_000_000u64, "u64v": u64::MAX - 1,
        "i8v": -100, "i16v": -30000, "i32v": -2_000_000_000, "i64v": i64::MIN + 1,
        "flag": true, "f32v": 1.5, "f64v": -2.25, "arr": "abc", "msg": "héllo wörld",
    });
    for (key, value) in expected.as_object().unwrap() {
        assert_eq!(&fields[key], value, "{key} in {line}");
    }
    assert!(fields["blob"].to_string().contains("de") || fields["blob"] == serde_json::json!([222, 173, 190, 239]), "blob in {line}");
}

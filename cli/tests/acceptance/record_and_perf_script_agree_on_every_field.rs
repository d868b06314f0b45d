//! One event, two readers attached at once: `perf script` (Debian's perf in
//! the guest) and `usertrace record` agree on every field value. perf
//! prints our f32/f64 fields (`struct f32/f64`) as the integer of their
//! IEEE bits, s8/s16 without their sign (perf 6.1), and a `__rel_loc u8[]`
//! as its raw location word, so those are compared after conversion (the
//! bytes field only by its length: perf does not print the bytes).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::support::*;

#[test]
fn record_and_perf_script_agree_on_every_field() {
    let name = unique("perf");
    let mut producer =
        Command::new(ut_emit()).args(["all", &name, "--on-stdin"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = String::new();
    BufReader::new(producer.stdout.take().unwrap()).read_line(&mut ready).unwrap();

    let json = format!("/tmp/{name}.json");
    let mut ours = Command::new(usertrace())
        .args(["record", "-e", &name, "--format", "json", "-o", &json])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(ours.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("attached"), "usertrace record: {line}");

    let data = format!("/tmp/{name}.data");
    record_beside_perf(&mut ours, &mut producer, &[format!("user_events:{name}")], &data);

    let script = Command::new(perf()).args(["script", "-i", &data]).output().unwrap();
    let text = String::from_utf8_lossy(&script.stdout);
    let perf_line = text.lines().find(|l| l.contains(&name)).unwrap_or_else(|| panic!("perf script saw nothing:\n{text}"));
    let theirs = perf_fields(perf_line.split_once(&format!("{name}:")).unwrap().1, &ALL_FIELDS);
    let json = std::fs::read_to_string(&json).unwrap();
    let _ = (std::fs::remove_file(&data), std::fs::remove_file(format!("/tmp/{name}.json")));
    // One event line; the process and exit lines are not checked here.
    let events: Vec<&str> = json.lines().filter(|l| l.starts_with("{\"type\":\"event\"")).collect();
    assert_eq!(events.len(), 1, "{json}");

    let expected: BTreeMap<&str, String> = [
        ("u8v", "250".to_owned()),
        ("u16v", "65000".into()),
        ("u32v", "4000000000".into()),
        ("u64v", (u64::MAX - 1).to_string()),
        ("i8v", (-100i8 as u8).to_string()),
        ("i16v", (-30000i16 as u16).to_string()),
        ("i32v", "-2000000000".into()),
        ("i64v", (i64::MIN + 1).to_string()),
        ("flag", "1".into()),
        ("f32v", 1.5f32.to_bits().to_string()),
        ("f64v", (-2.25f64).to_bits().to_string()),
        ("arr", "abc".into()),
        ("msg", "héllo wörld".into()),
    ]
    .into_iter()
    .collect();
    let blob_loc: u32 = theirs["blob"].parse().unwrap();
    assert_eq!(blob_loc >> 16, 4, "perf's blob location word {blob_loc:#x} has length 4");
    for (field, value) in &expected {
        assert_eq!(theirs.get(*field), Some(value), "perf's {field} in {perf_line}");
    }
    // Ours, as perf would print it.
    let ours_as_perf: Vec<String> = [
        "\"u8v\":250", "\"u16v\":65000", "\"u32v\":4000000000", &format!("\"u64v\":{}", u64::MAX - 1),
        "\"i8v\":-100", "\"i16v\":-30000", "\"i32v\":-2000000000", &format!("\"i64v\":{}", i64::MIN + 1),
        "\"flag\":true", "\"f32v\":1.5", "\"f64v\":-2.25", "\"arr\":\"abc\"", "\"msg\":\"héllo wörld\"", "\"blob\":\"deadbeef\"",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for part in ours_as_perf {
        assert!(json.contains(&part), "usertrace lacks {part}: {json}");
    }
    assert!(json.contains("\"comm\":\"ut_emit\""), "{json}");
    assert!(perf_line.trim_start().starts_with("ut_emit"), "{perf_line}");
}

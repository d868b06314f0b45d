//! `usertrace list PATTERN` shows a registered event under its tracefs name,
//! with its fields in declaration order, as "not traced" until a recorder
//! attaches and "used by perf" while one is attached; a glob finds it too.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::support::*;

const FIELDS: [&str; 14] =
    ["u8v", "u16v", "u32v", "u64v", "i8v", "i16v", "i32v", "i64v", "flag", "f32v", "f64v", "arr", "msg", "blob"];

/// The header line of `event` and the `TYPE NAME` lines under it.
fn listed(pattern: &str, event: &str) -> (String, Vec<String>) {
    let out = Command::new(usertrace()).args(["list", pattern]).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with(&format!("user_events:{event} ")));
    let header = lines.next().unwrap_or_else(|| panic!("{event} not listed:\n{stdout}")).to_owned();
    let fields = lines.take_while(|l| l.starts_with("    ")).map(|l| l.trim().to_owned()).collect();
    (header, fields)
}

#[test]
fn list_shows_a_registered_event_with_its_fields_and_whether_it_is_in_use() {
    let name = unique("list");
    let mut producer =
        Command::new(ut_emit()).args(["all", &name, "--on-stdin"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = String::new();
    BufReader::new(producer.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    assert!(ready.starts_with("ready "), "{ready}");

    let (header, fields) = listed(&name, &name);
    assert_eq!(header, format!("user_events:{name}  (not traced)"));
    let names: Vec<&str> = fields.iter().map(|f| f.rsplit(' ').next().unwrap()).collect();
    assert_eq!(names, FIELDS, "{fields:?}");
    assert_eq!(fields[0], "u8 u8v");
    assert_eq!(fields[7], "s64 i64v");
    assert!(fields[12].starts_with("__rel_loc char"), "{}", fields[12]);

    // A glob over this run's events finds the same one.
    let prefix = name.rsplit_once('_').unwrap().0;
    assert_eq!(listed(&format!("{prefix}_*"), &name).1, fields);

    let out_file = format!("/tmp/{name}.txt");
    let mut recorder =
        Command::new(usertrace()).args(["record", "-e", &name, "-o", &out_file]).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(recorder.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains(&format!("attached user_events:{name}")), "{line}");

    let (header, _) = listed(&name, &name);
    assert_eq!(header, format!("user_events:{name}  (used by perf)"));

    // Let the producer emit and exit, then stop the recorder.
    producer.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(producer.wait().unwrap().success());
    // SAFETY: signals our own child.
    unsafe { libc::kill(recorder.id() as libc::pid_t, libc::SIGINT) };
    assert!(recorder.wait().unwrap().success());
    let _ = std::fs::remove_file(&out_file);
}

//! A registered event whose tracefs `format` file cannot be parsed is
//! reported as that: the file and what is wrong in it, not "no user event
//! matches". Runs on any host: the tracefs is a scratch directory laid out
//! as the kernel lays out its own.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn tracefs(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-bad-format-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write(&dir.join("user_events_data"), "");
    write(&dir.join("user_events_status"), "ut_good\nut_broken\n\nActive: 2\nBusy: 0\nMax: 32768\n");
    write(&dir.join("events/user_events/ut_good/format"), "name: ut_good\nID: 1502\nformat:\n\tfield:s64 t;\toffset:8;\tsize:8;\tsigned:1;\n");
    // No ID line: nothing can attach to it.
    write(&dir.join("events/user_events/ut_broken/format"), "name: ut_broken\nformat:\n\tfield:u32 n;\toffset:8;\tsize:4;\tsigned:0;\n");
    dir
}

fn list(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usertrace")).arg("list").args(args).env("USERTRACE_TRACEFS", dir).output().unwrap()
}

#[test]
fn listing_the_event_by_name_names_its_format_file() {
    let dir = tracefs("exact");
    let o = list(&dir, &["ut_broken"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("no user event matches"), "{stderr}");
    let format = dir.join("events/user_events/ut_broken/format");
    assert!(stderr.starts_with(&format!("usertrace list: {}: ", format.display())), "{stderr}");
    assert!(stderr.contains("cannot be parsed"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_listing_shows_the_others_and_names_the_broken_one() {
    let dir = tracefs("glob");
    let o = list(&dir, &["ut_*"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "user_events:ut_good  (not traced)\n    s64 t\n");
    assert!(stderr.contains("ut_broken/format: "), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

//! `usertrace convert` writes a regular file atomically (a temporary file
//! renamed over it), but what is not a regular file is written in place: a
//! device stays the device, a FIFO's reader gets the bytes, a symlink is
//! followed and its target replaced in the target's directory, the link
//! kept. A replaced file keeps its mode. Runs on any host, as root (mknod).

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn usertrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usertrace")).args(args).output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-in-place-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

const GOOD: &str = "\
{\"type\":\"process\",\"time_ns\":1,\"pid\":5,\"executable\":\"/bin/app\",\"command_line\":[\"app\"]}
{\"type\":\"event\",\"time_ns\":10,\"cpu\":0,\"pid\":5,\"tid\":5,\"comm\":\"app\",\"process\":\"app\",\"event\":\"req\",\"fields\":{\"span_begin\":1}}
{\"type\":\"event\",\"time_ns\":30,\"cpu\":0,\"pid\":5,\"tid\":5,\"comm\":\"app\",\"process\":\"app\",\"event\":\"req\",\"fields\":{\"span_end\":1}}
";

fn convert_to(dir: &Path, out: &Path) -> Output {
    let input = dir.join("in.jsonl");
    fs::write(&input, GOOD).unwrap();
    usertrace(&["convert", input.to_str().unwrap(), out.to_str().unwrap(), "--format", "json"])
}

fn assert_ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_character_device_stays_the_device() {
    let dir = scratch("device");
    let null = dir.join("null");
    // The test needs root; failing to make the device fails it.
    let made = Command::new("mknod").arg(&null).args(["c", "1", "3"]).status().unwrap();
    assert!(made.success(), "mknod c 1 3 failed: this test runs as root");
    let o = convert_to(&dir, &null);
    assert_ok(&o);
    let meta = fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device(), "{:?}", meta.file_type());
    assert_eq!(meta.rdev(), fs::metadata("/dev/null").unwrap().rdev());
    assert_eq!(entries(&dir), ["in.jsonl", "null"]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_fifos_reader_gets_the_bytes() {
    let dir = scratch("fifo");
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    let o = convert_to(&dir, &fifo);
    assert_ok(&o);
    // Replaced by a file, the FIFO's reader would wait for ever: say so
    // rather than join it.
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert_eq!(String::from_utf8(reader.join().unwrap()).unwrap(), GOOD);
    assert_eq!(entries(&dir), ["fifo", "in.jsonl"]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_symlinks_target_is_replaced_and_the_link_kept() {
    let dir = scratch("symlink");
    fs::create_dir_all(dir.join("links")).unwrap();
    fs::create_dir_all(dir.join("data")).unwrap();
    let target = dir.join("data/out.jsonl");
    fs::write(&target, "old\n").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.join("links/out.jsonl");
    std::os::unix::fs::symlink("../data/out.jsonl", &link).unwrap();
    let o = convert_to(&dir, &link);
    assert_ok(&o);
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("../data/out.jsonl"));
    assert_eq!(fs::read_to_string(&target).unwrap(), GOOD);
    assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o7777, 0o640);
    assert_eq!(entries(&dir.join("links")), ["out.jsonl"]);
    assert_eq!(entries(&dir.join("data")), ["out.jsonl"]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_dangling_symlink_gets_its_target_created() {
    let dir = scratch("dangling");
    let link = dir.join("out.jsonl");
    std::os::unix::fs::symlink("made.jsonl", &link).unwrap();
    let o = convert_to(&dir, &link);
    assert_ok(&o);
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(fs::read_to_string(dir.join("made.jsonl")).unwrap(), GOOD);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_replaced_file_keeps_its_mode() {
    let dir = scratch("mode");
    let out = dir.join("out.jsonl");
    fs::write(&out, "old\n").unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o600)).unwrap();
    let o = convert_to(&dir, &out);
    assert_ok(&o);
    assert_eq!(fs::read_to_string(&out).unwrap(), GOOD);
    assert_eq!(fs::metadata(&out).unwrap().permissions().mode() & 0o7777, 0o600);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_replaced_file_keeps_its_owner_when_root_replaces_it() {
    let dir = scratch("owner");
    let out = dir.join("out.jsonl");
    fs::write(&out, "old\n").unwrap();
    // Root may give a file away and so keep it someone else's.
    std::os::unix::fs::chown(&out, Some(4321), Some(4322)).expect("chown: this test runs as root");
    let o = convert_to(&dir, &out);
    assert_ok(&o);
    let meta = fs::metadata(&out).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (4321, 4322));
    assert_eq!(fs::read_to_string(&out).unwrap(), GOOD);
    fs::remove_dir_all(dir).unwrap();
}

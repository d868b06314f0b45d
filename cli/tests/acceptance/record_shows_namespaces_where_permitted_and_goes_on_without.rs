//! Namespaces "where permitted": as root, every JSON line names the
//! namespaces of the emitting task; with every capability dropped (and
//! perf_event_paranoid at -1, so perf itself is still allowed), the kernel
//! refuses namespace records and `record` goes on without them.

use std::ffi::OsString;
use std::process::{Command, Output};

use crate::support::*;

/// `usertrace record` of three events from `ut_emit seq`, run through
/// `wrapper` (a command that execs its arguments) if given.
fn record(wrapper: &[&str], name: &str) -> Output {
    let mut argv: Vec<OsString> = wrapper.iter().map(OsString::from).collect();
    argv.push(usertrace().into());
    argv.extend(["record", "-e", name, "--format", "json", "--"].map(OsString::from));
    argv.push(ut_emit().into());
    argv.extend(["seq", name, "3"].map(OsString::from));
    Command::new(&argv[0]).args(&argv[1..]).output().unwrap()
}

fn json_lines(out: &Output) -> Vec<String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("3 events, 0 lost"), "{stderr}");
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    stdout.lines().filter(|l| l.starts_with("{\"type\":\"event\"")).map(str::to_owned).collect()
}

/// This test's namespaces as `record` prints them; the producer it starts
/// shares them.
fn our_namespaces() -> String {
    let inode = |kind: &str| {
        let link = std::fs::read_link(format!("/proc/self/ns/{kind}")).unwrap();
        link.to_string_lossy().split_once(":[").unwrap().1.trim_end_matches(']').to_owned()
    };
    let kinds = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];
    let pairs: Vec<String> = kinds.iter().map(|k| format!("\"{k}\":{}", inode(k))).collect();
    format!("\"namespaces\":{{{}}}", pairs.join(","))
}

/// Sets perf_event_paranoid for the life of the guard.
struct Paranoid(String);

impl Paranoid {
    const PATH: &'static str = "/proc/sys/kernel/perf_event_paranoid";
    fn set(level: &str) -> Self {
        let old = std::fs::read_to_string(Self::PATH).unwrap();
        std::fs::write(Self::PATH, level).unwrap();
        Paranoid(old)
    }
}

impl Drop for Paranoid {
    fn drop(&mut self) {
        let _ = std::fs::write(Self::PATH, self.0.trim());
    }
}

#[test]
fn record_shows_namespaces_where_permitted_and_goes_on_without() {
    let name = unique("ns");
    let expected = our_namespaces();
    let lines = json_lines(&record(&[], &name));
    assert_eq!(lines.len(), 3);
    for line in &lines {
        assert!(line.contains(&format!("\"process\":\"ut_emit\",{expected},\"event\":\"{name}\"")), "{line}\nexpected {expected}");
    }

    let _paranoid = Paranoid::set("-1");
    let no_capabilities =
        ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--securebits=+noroot,+noroot_locked"];
    let lines = json_lines(&record(&no_capabilities, &name));
    assert_eq!(lines.len(), 3);
    for (n, line) in lines.iter().enumerate() {
        assert!(!line.contains("namespaces"), "{line}");
        assert!(line.contains(&format!("\"comm\":\"ut_emit\",\"process\":\"ut_emit\",\"event\":\"{name}\",\"fields\":{{\"n\":{n}}}")), "{line}");
    }
}

//! Paths of the binaries under test, a unique event name, and running them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use std::sync::atomic::{AtomicU32, Ordering};

pub fn usertrace() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_usertrace"))
}

/// core's `ut_emit` producer example, next to our binary.
pub fn ut_emit() -> PathBuf {
    let path = usertrace().parent().unwrap().join("examples/ut_emit");
    assert!(path.exists(), "{} is missing: build core's examples (cargo test --workspace)", path.display());
    path
}

pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("ut_cli_{prefix}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Debian's perf, as the guest has it.
pub fn perf() -> String {
    for p in ["/usr/bin/perf", "/usr/bin/perf_6.1"] {
        if std::path::Path::new(p).exists() {
            return p.to_owned();
        }
    }
    panic!("perf is not installed (Debian: linux-perf)");
}

/// Runs `usertrace ARGS`, which must succeed; its stdout.
pub fn usertrace_ok(args: &[&str]) -> String {
    let out = Command::new(usertrace()).args(args).output().unwrap();
    assert!(out.status.success(), "usertrace {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `perf record -q -a -o DATA`, with a minute rather than perf's 500 ms
/// to read each process's /proc/PID/maps at its start: past its budget
/// perf synthesizes no mapping for the process, which a guest under
/// emulation on a loaded host has overrun; what is tested is our reading
/// of the mappings perf found.
pub fn perf_record_args(data: &str) -> Vec<&str> {
    vec!["record", "-q", "-a", "--proc-map-timeout", "60000", "-o", data]
}

/// Runs `perf record -a` of `events` into `data` beside `ours`, a running
/// `usertrace record` already attached; once perf is attached too, lets
/// `producer` go (a line on its stdin), and when it has exited stops both
/// recorders with Ctrl-C. `ours` must then exit successfully.
pub fn record_beside_perf(ours: &mut Child, producer: &mut Child, events: &[String], data: &str) {
    let mut args = perf_record_args(data);
    for e in events {
        args.extend(["-e", e.as_str()]);
    }
    let mut theirs = Command::new(perf()).args(&args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    // perf enables its events only after synthesizing /proc; give it time
    // (TCG is slow), then let the producer write.
    std::thread::sleep(Duration::from_secs(8));
    producer.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(producer.wait().unwrap().success());
    std::thread::sleep(Duration::from_secs(1));
    for pid in [theirs.id(), ours.id()] {
        let _ = Command::new("kill").args(["-INT", &pid.to_string()]).status();
    }
    // perf's exit status after SIGINT varies by version; its file is what counts.
    let _ = theirs.wait();
    let status = ours.wait().unwrap();
    assert!(status.success(), "usertrace record after Ctrl-C: {status}");
}

/// The fields of `ut_emit all`'s event, in order.
pub const ALL_FIELDS: [&str; 14] = ["u8v", "u16v", "u32v", "u64v", "i8v", "i16v", "i32v", "i64v", "flag", "f32v", "f64v", "arr", "msg", "blob"];

/// perf script's `a=1 b=two words c=3`, split on the field names `names`.
pub fn perf_fields(rest: &str, names: &[&str]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        let key = format!(" {n}=");
        let Some(start) = rest.find(&key) else { continue };
        let after = &rest[start + key.len()..];
        let end = names[i + 1..].iter().find_map(|next| after.find(&format!(" {next}="))).unwrap_or(after.len());
        out.insert((*n).to_owned(), after[..end].trim().to_owned());
    }
    out
}

/// The Python that has Perfetto's protos: USERTRACE_PERFETTO_PYTHON
/// (harness/setup makes it; harness/test-all passes it). Never skipped.
pub fn perfetto_python() -> PathBuf {
    let python = std::env::var_os("USERTRACE_PERFETTO_PYTHON")
        .expect("USERTRACE_PERFETTO_PYTHON must name a python with the `perfetto` package (harness/setup makes one)");
    PathBuf::from(python)
}

/// output/tests/check_pftrace.py: reads a .pftrace with those protos.
pub fn pftrace_checker() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../output/tests/check_pftrace.py")
}

/// The event lines of `record --format json`'s stdout, parsed (the
/// command's own output, sharing stdout, is skipped).
pub fn event_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout.lines().filter(|l| l.starts_with("{\"type\":\"event\"")).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `usertrace record --sched -e NAME_* -o OUTPUT -- ut_emit sched NAME`:
/// four spans that ut_emit times itself with CLOCK_MONOTONIC (a 300 ms
/// sleep, 200 ms of CPU on a CPU of its own, a spin beside a hog on the same
/// CPU, a pipe read that `sh` wakes). The recorder runs on CPU 0, so that
/// the spin (pinned by ut_emit to the last CPU) has a CPU to itself. Returns
/// what ut_emit said: each span's length by its own clock, and its threads.
pub fn record_ut_emit_sched(name: &str, output: &std::path::Path) -> SchedRun {
    let out = std::process::Command::new("taskset")
        .args(["-c", "0"])
        .arg(usertrace())
        .args(["record", "--sched", "-e", &format!("{name}_*"), "-o"])
        .arg(output)
        .arg("--")
        .arg(ut_emit())
        .args(["sched", name])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let took: std::collections::HashMap<String, u64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("took "))
        .map(|l| l.split_once(' ').map(|(n, ns)| (n.to_owned(), ns.parse().unwrap())).unwrap())
        .collect();
    assert_eq!(took.len(), 4, "{stdout}");
    let threads: Vec<u64> = stdout.lines().filter_map(|l| l.strip_prefix("thread ")).map(|tid| tid.parse().unwrap()).collect();
    assert!(!threads.is_empty(), "{stdout}");
    SchedRun { took, threads }
}

/// What `ut_emit sched` said of itself: how long each span took, by its
/// clock, and the threads it had at its end.
pub struct SchedRun {
    pub took: std::collections::HashMap<String, u64>,
    pub threads: Vec<u64>,
}

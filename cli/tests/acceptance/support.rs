//! Paths of the binaries under test, a unique event name, and running them.

use std::path::PathBuf;
use std::process::Command;
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

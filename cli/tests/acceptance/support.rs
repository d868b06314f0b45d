//! Paths of the binaries under test, and a unique event name.

use std::path::PathBuf;
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

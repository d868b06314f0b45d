//! An arbitrary file given as a perf.data archive: `ArchiveReader` (our
//! attribution over Microsoft's `tracepoint_perf`, reading headers, attrs,
//! tracing data and records that someone else wrote) must read it to its
//! end or stop with an `ArchiveError`, never panic or loop.
//!
//! Input: the whole file. The reader opens a path, so each input is
//! written to a file of this process's own under /tmp first.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use usertrace_consumer::archive::ArchiveReader;

/// One file per fuzzing process: parallel jobs (`-jobs`, `-fork`) must
/// not read each other's inputs.
fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| std::env::temp_dir().join(format!("usertrace-fuzz-archive-reader-{}.data", std::process::id())))
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).unwrap();
    let Ok(mut reader) = ArchiveReader::open(path) else { return };
    let _ = reader.clock();
    // Each round reads at least one record, and a file holds finitely
    // many: a bound far beyond any input's record count catches a loop.
    for _ in 0..=data.len() {
        match reader.next_round() {
            Ok(Some(outputs)) => drop(outputs),
            Ok(None) | Err(_) => return,
        }
    }
    panic!("next_round kept returning rounds past the end of a {}-byte file", data.len());
});

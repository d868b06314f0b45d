//! The archive: a `perf.data` file, perf's own format, written with
//! Microsoft's `tracepoint_perf` (the sibling of the decoder we use), so
//! that `perf script`, `perf report`, Microsoft's `decode_perf_to_json` and
//! `usertrace convert` all read it.
//!
//! What it holds:
//! - every record as the rings gave it, byte for byte: samples, and the
//!   sideband the session takes (COMM, FORK, EXIT, MMAP2, NAMESPACES) and
//!   the kernel's LOST records. One `FINISHED_ROUND` follows each read of
//!   the rings, as `perf record` writes them;
//! - before `FINISHED_INIT`, the threads `/proc` showed when the session
//!   started, as the COMM (and NAMESPACES) records `perf record`
//!   synthesizes for them;
//! - the attr, ids and tracefs format of every attached tracepoint, late
//!   ones included, and of the two dummy events whose rings carry the
//!   sideband and the events (`usertrace:sideband`, `usertrace:events`):
//!   a LOST record's id says which ring lost what; and of the brief probe
//!   whose thread's exit flushes the last LOST records
//!   (`usertrace:lost-probe`);
//! - CLOCKID (CLOCK_MONOTONIC) and CLOCK_DATA, the wall clock at a
//!   monotonic instant: what the `clock` line of a JSON-lines archive says.
//!
//! What perf.data has no place for, each process's executable, command
//! line and container id, is written as the samples of a tracepoint of
//! our own, `usertrace:process`, whose format the file carries like any
//! other. Why this form: perf and Microsoft's decoder then show them as
//! ordinary events (`perf script` prints `usertrace:process: pid=...
//! executable=...`), where an unknown record type would make perf warn and
//! a header of our own would be invisible to both. No kernel has the
//! tracepoint, so no live event can be mistaken for one. The drain thread
//! writes one just before a process's first sample, and before each
//! exec's COMM record: what it read from `/proc` then, which the session
//! itself goes by (`drain.rs`), and a reader takes with that record.

mod dump_format;
mod format;
mod reader;
mod writer;

pub use reader::{ArchiveError, ArchiveReader};
pub use writer::{ArchiveOptions, ArchiveWriter};
pub(crate) use format::sample as process_sample;
pub(crate) use format::write_sample;
pub(crate) use writer::Descriptions;

/// The perf id of `usertrace:process` samples, which a flight recorder
/// keeps per process.
pub(crate) const PROCESS_PERF_ID: u64 = format::PERF_ID;

/// The tracepoint ids (`common_type`) of the archive's own tracepoints,
/// `usertrace:process` and `usertrace:dump`, are the top of the `u16`
/// range; any other source of tracepoints of our own (shared memory)
/// counts down from just below this one, so that a reader, which finds a
/// sample's format by its id, never takes one for the other.
pub(crate) const LOWEST_OWN_TRACEPOINT_ID: u16 = {
    assert!(format::ID > dump_format::ID);
    dump_format::ID
};

/// The name perf shows for the dummy event whose rings carry task records.
pub(crate) const SIDEBAND_NAME: &str = "usertrace:sideband";
/// The name perf shows for the dummy event whose rings carry tracepoints.
pub(crate) const EVENTS_NAME: &str = "usertrace:events";
/// The name of the brief event whose thread exit makes the kernel write
/// the last LOST records at the end of a session (`Session::flush`).
pub(crate) const EXIT_PROBE_NAME: &str = "usertrace:lost-probe";

/// A sample of perf id `id` with an empty payload, for the flight
/// recorder's tests.
#[cfg(test)]
pub(crate) fn sample_record_for_tests(id: u64, pid: u32, time: u64) -> Vec<u8> {
    format::sample_record(id, pid, time, 0, vec![0; 8])
}

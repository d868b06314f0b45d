//! The recording's clock and the wall clock, read together.
//!
//! # Safety
//! One `clock_gettime` per clock, into a live `timespec`.
#![allow(unsafe_code)]

use usertrace_output::ClockRecord;

/// CLOCK_MONOTONIC (perf's timestamps, the recording's clock) and
/// CLOCK_REALTIME, read back to back: the pair a recording file starts
/// with, and what a live export converts times with.
pub fn now() -> ClockRecord {
    let read = |id: libc::clockid_t| {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime(2) writes one timespec through the pointer,
        // which points to a live, writable timespec; both clocks exist on
        // every Linux.
        unsafe { libc::clock_gettime(id, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    let time_ns = read(libc::CLOCK_MONOTONIC);
    ClockRecord { time_ns, unix_ns: read(libc::CLOCK_REALTIME) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_wall_clock_is_read_beside_the_monotonic_one() {
        let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        let reading = super::now();
        let after = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        assert!(before <= reading.unix_ns && reading.unix_ns <= after);
        assert!(reading.time_ns > 0 && reading.time_ns < reading.unix_ns);
    }
}

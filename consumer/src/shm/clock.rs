//! Raw TSC stamps to CLOCK_MONOTONIC: a line through two readings of
//! both clocks, the first at the recorder's start and the last just before
//! each read of the rings (the layout's "Time stamps" says why that holds
//! to well under a microsecond).

use usertrace::shm_layout::tsc_now;

use crate::sys;

/// The two readings, each `(tsc, monotonic ns)`.
pub(crate) struct TscClock {
    first: (u64, u64),
    last: (u64, u64),
}

/// Readings taken for one, the one with the narrowest window kept.
const TRIES: usize = 5;
/// The least time between the two readings before a slope is trusted:
/// the window of a reading, tens of nanoseconds, is then a few parts per
/// million of it.
const MIN_SPAN_NS: u64 = 2_000_000;

impl TscClock {
    pub(crate) fn new() -> TscClock {
        let now = reading();
        TscClock { first: now, last: now }
    }

    /// Takes a new last reading: before each read of the rings, so that
    /// what is read was stamped before it. The first one after the start
    /// waits until `MIN_SPAN_NS` have passed, once.
    pub(crate) fn refresh(&mut self) {
        while sys::monotonic_ns().saturating_sub(self.first.1) < MIN_SPAN_NS {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        self.last = reading();
    }

    /// `tsc` in CLOCK_MONOTONIC nanoseconds.
    pub(crate) fn to_ns(&self, tsc: u64) -> u64 {
        convert(self.first, self.last, tsc)
    }
}

/// `tsc` on the line through readings `a` and `b`, measured from `b`, the
/// nearer one; with no slope yet (equal readings), `b`'s time.
fn convert(a: (u64, u64), b: (u64, u64), tsc: u64) -> u64 {
    let (ticks, ns) = (i128::from(b.0) - i128::from(a.0), i128::from(b.1) - i128::from(a.1));
    if ticks <= 0 || ns <= 0 {
        return b.1;
    }
    let since = i128::from(tsc) - i128::from(b.0);
    let at = i128::from(b.1) + since * ns / ticks;
    at.clamp(0, i128::from(u64::MAX)) as u64
}

/// One reading: the monotonic clock read between two TSC reads, paired
/// with their midpoint; of `TRIES`, the one whose TSC reads were closest
/// (a preemption in between widens only that one).
fn reading() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..TRIES {
        let before = tsc_now();
        let ns = sys::monotonic_ns();
        let after = tsc_now();
        let window = after.saturating_sub(before);
        if window < best.0 {
            best = (window, before + window / 2, ns);
        }
    }
    (best.1, best.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_convert_along_the_line_through_the_two_readings() {
        // 3 ticks a nanosecond, from (3000, 1000) to (3_003_000, 1_001_000).
        let (a, b) = ((3000, 1000), (3_003_000, 1_001_000));
        assert_eq!(convert(a, b, 3_003_000), 1_001_000);
        assert_eq!(convert(a, b, 3_000_000), 1_000_000);
        assert_eq!(convert(a, b, 3_006_000), 1_002_000, "past the last reading, the same line");
        assert_eq!(convert(a, a, 5), 1000, "no slope yet: the reading's time");
        assert_eq!(convert(a, b, 0), 0, "never below 0");
    }

    #[test]
    fn a_tsc_read_now_converts_to_the_monotonic_clock_read_beside_it() {
        if !cfg!(target_arch = "x86_64") {
            return;
        }
        let mut clock = TscClock::new();
        clock.refresh();
        let before = sys::monotonic_ns();
        let converted = clock.to_ns(tsc_now());
        let after = sys::monotonic_ns();
        // Loose: this only checks the two clocks agree (the CLI's test holds
        // events to the bound); a preemption may come between the reads.
        assert!(converted + 50_000 >= before && converted <= after + 50_000, "{before} <= {converted} <= {after}");
    }
}

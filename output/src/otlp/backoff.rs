//! How long to wait before sending a batch again: exponential backoff with
//! jitter, unless the collector said how long (`Retry-After`).
//!
//! Jitter spreads the retries of many exporters (one per node) that lost
//! the same collector at once, so they do not all come back in step.
//! References: the OTLP specification, "OTLP/HTTP Throttling" and
//! "Retryable Response Codes" (specification/protocol/otlp.md).
//!
//! # What a collector may ask
//!
//! A `Retry-After` is honoured up to [`MAX_RETRY_AFTER`] (60 s), and no
//! further: the value comes from the peer, and one of 2^64 - 1 seconds
//! (sent by mistake or malice) must not stop the export for the rest of a
//! recording, nor overflow a clock. Past the cap the batch is simply
//! tried again, and a collector still throttling says so again.

use std::time::Duration;

/// The longest `Retry-After` honoured: 60 seconds.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The delays of one batch's retries.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    max_retry_after: Duration,
    attempt: u32,
}

impl Backoff {
    /// Backoff from `initial`, doubling per attempt up to `max`; a
    /// `Retry-After` is honoured up to [`MAX_RETRY_AFTER`].
    pub fn new(initial: Duration, max: Duration) -> Backoff {
        Backoff { initial, max: max.max(initial), max_retry_after: MAX_RETRY_AFTER, attempt: 0 }
    }

    /// The same, honouring a `Retry-After` only up to `cap` (at most
    /// [`MAX_RETRY_AFTER`]).
    pub fn with_retry_after_cap(self, cap: Duration) -> Backoff {
        Backoff { max_retry_after: cap.min(MAX_RETRY_AFTER), ..self }
    }

    /// The wait before the next attempt. `retry_after` (the collector's
    /// `Retry-After`) is the wait when given, up to the cap; otherwise the
    /// attempt's exponential delay `d` is jittered into `[d/2, d)` by
    /// `unit`, a random number in `[0, 1)`.
    pub fn next_delay(&mut self, retry_after: Option<Duration>, unit: f64) -> Duration {
        let exponential = self.initial.saturating_mul(1u32 << self.attempt.min(20)).min(self.max);
        self.attempt = self.attempt.saturating_add(1);
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        exponential.mul_f64(0.5 + 0.5 * unit.clamp(0.0, 1.0))
    }

    /// How many delays were handed out.
    pub fn attempts(&self) -> u32 {
        self.attempt
    }
}

/// A `Retry-After` value: delay-seconds. (The HTTP-date form is read as
/// absent, and the backoff's own delay applies.)
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn delays_double_up_to_the_maximum_with_jitter_in_the_upper_half() {
        let mut b = Backoff::new(100 * MS, 1000 * MS);
        let lows: Vec<Duration> = (0..6).map(|_| b.next_delay(None, 0.0)).collect();
        assert_eq!(lows, [50 * MS, 100 * MS, 200 * MS, 400 * MS, 500 * MS, 500 * MS]);
        let mut b = Backoff::new(100 * MS, 1000 * MS);
        let highs: Vec<Duration> = (0..6).map(|_| b.next_delay(None, 0.999_999)).collect();
        for (h, full) in highs.iter().zip([100, 200, 400, 800, 1000, 1000]) {
            assert!(*h < full * MS && *h > (full - 1) * MS, "{h:?} for {full}");
        }
        assert_eq!(b.attempts(), 6);
    }

    #[test]
    fn retry_after_is_the_wait_when_given() {
        let mut b = Backoff::new(100 * MS, 1000 * MS);
        assert_eq!(b.next_delay(Some(Duration::from_secs(3)), 0.5), Duration::from_secs(3));
        assert_eq!(b.next_delay(Some(Duration::ZERO), 0.5), Duration::ZERO);
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }

    #[test]
    fn retry_after_is_capped_however_large() {
        let mut b = Backoff::new(100 * MS, 1000 * MS);
        let huge = parse_retry_after("18446744073709551615");
        assert_eq!(huge, Some(Duration::from_secs(u64::MAX)));
        assert_eq!(b.next_delay(huge, 0.5), MAX_RETRY_AFTER);
        assert_eq!(b.next_delay(Some(Duration::MAX), 0.5), MAX_RETRY_AFTER);
        let mut b = Backoff::new(100 * MS, 1000 * MS).with_retry_after_cap(300 * MS);
        assert_eq!(b.next_delay(huge, 0.5), 300 * MS);
        assert_eq!(b.next_delay(Some(200 * MS), 0.5), 200 * MS);
        let b = Backoff::new(100 * MS, 1000 * MS).with_retry_after_cap(Duration::MAX);
        assert_eq!(b.max_retry_after, MAX_RETRY_AFTER);
    }
}

//! Durations that come from outside (a collector's `Retry-After`, the
//! caller's grace period, a configured batch age) may be as large as the
//! type allows: the exporter caps or saturates them, and neither its
//! thread nor the caller's panics.
//!
//! The collector here is a local stub on 127.0.0.1 (tiny_http), because a
//! real collector cannot be made to answer 429 with a `Retry-After` of
//! 2^64 - 1 seconds on demand.

use std::time::Duration;

use usertrace_output::otlp::{Exporter, ExporterSettings, QueueLimits};
use usertrace_output::Record;

mod stub_collector;

/// A stub answering the scripted statuses (with their `Retry-After`),
/// then 200s.
fn stub(script: Vec<(u16, Option<&'static str>)>) -> (stub_collector::Stub, String) {
    let stub = stub_collector::Stub::start("127.0.0.1:0", script, Duration::ZERO);
    let addr = stub.addr.clone();
    (stub, addr)
}

fn settings(addr: &str, limits: QueueLimits) -> ExporterSettings {
    stub_collector::settings(addr, limits, Duration::from_millis(20))
}

fn event(n: u64) -> Record {
    stub_collector::job_done(n, 0)
}

fn quick() -> QueueLimits {
    QueueLimits { max_batch_records: 100, max_batch_age: Duration::from_millis(10), memory_cap_bytes: 1 << 20 }
}

#[test]
fn a_retry_after_of_u64_max_seconds_is_capped_and_the_batch_is_sent_again() {
    let (_stub, addr) = stub(vec![(429, Some("18446744073709551615"))]);
    let mut s = settings(&addr, quick());
    s.max_retry_after = Duration::from_millis(200);
    let exporter = Exporter::start(s).unwrap();
    (0..10).for_each(|n| exporter.push(event(n)));
    let summary = exporter.finish(Duration::from_secs(10));
    assert_eq!((summary.exported_events, summary.dropped_events, summary.failed_events, summary.retries), (10, 0, 0, 1), "{summary}");
}

#[test]
fn a_grace_period_of_duration_max_waits_for_everything_and_returns() {
    let (_stub, addr) = stub(vec![]);
    let exporter = Exporter::start(settings(&addr, quick())).unwrap();
    (0..10).for_each(|n| exporter.push(event(n)));
    let summary = exporter.finish(Duration::MAX);
    assert_eq!((summary.exported_events, summary.dropped_events, summary.failed_events), (10, 0, 0), "{summary}");
}

#[test]
fn a_batch_age_of_duration_max_only_seals_at_the_end() {
    let (_stub, addr) = stub(vec![]);
    let exporter = Exporter::start(settings(&addr, QueueLimits { max_batch_age: Duration::MAX, ..quick() })).unwrap();
    (0..10).for_each(|n| exporter.push(event(n)));
    std::thread::sleep(Duration::from_millis(50));
    let summary = exporter.finish(Duration::from_secs(10));
    assert_eq!((summary.exported_events, summary.dropped_events, summary.failed_events), (10, 0, 0), "{summary}");
    assert_eq!(summary.last_error, None, "{summary}");
}

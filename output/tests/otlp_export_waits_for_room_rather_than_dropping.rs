//! `Exporter::push_blocking`, for a caller that has all its records at
//! hand (`usertrace export`): a full queue makes it wait for the exporter
//! to make room, not drop the oldest batches, so memory stays under the
//! cap and every event gets out; against a collector that never comes it
//! says so once the caller's patience is spent, and queues nothing more.
//!
//! The collector is a local stub on 127.0.0.1 (`stub_collector`) that
//! answers slowly, because a real collector cannot be made that slow on
//! demand.

use std::net::TcpListener;
use std::time::Duration;

use usertrace_output::otlp::queue::approx_bytes;
use usertrace_output::otlp::{Exporter, ExporterSettings, QueueLimits};
use usertrace_output::Record;

mod stub_collector;
use stub_collector::Stub;

/// A stub that takes 5 ms over every answer.
fn slow_stub() -> (Stub, String) {
    let stub = Stub::start("127.0.0.1:0", vec![], Duration::from_millis(5));
    let addr = stub.addr.clone();
    (stub, addr)
}

fn event(n: u64) -> Record {
    stub_collector::job_done(n, 0)
}

fn settings(addr: &str, limits: QueueLimits) -> ExporterSettings {
    stub_collector::settings(addr, limits, Duration::from_millis(20))
}

#[test]
fn a_full_queue_makes_the_caller_wait_and_nothing_is_dropped() {
    let (_stub, addr) = slow_stub();
    let cap = 6 * approx_bytes(&event(0));
    let limits = QueueLimits { max_batch_records: 4, max_batch_age: Duration::from_millis(10), memory_cap_bytes: cap };
    let exporter = Exporter::start(settings(&addr, limits)).unwrap();
    for n in 0..200 {
        exporter.push_blocking(event(n), Duration::from_secs(10)).expect("room within 10 s");
    }
    let summary = exporter.finish(Duration::from_secs(10));
    assert_eq!((summary.recorded_events, summary.exported_events, summary.dropped_events, summary.failed_events), (200, 200, 0, 0), "{summary}");
    assert!(summary.peak_queue_bytes <= cap, "{} > {cap}", summary.peak_queue_bytes);
}

#[test]
fn a_collector_that_never_comes_leaves_the_queue_full_and_the_caller_is_told_after_its_patience() {
    let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let cap = 3 * approx_bytes(&event(0));
    let limits = QueueLimits { max_batch_records: 2, max_batch_age: Duration::from_millis(10), memory_cap_bytes: cap };
    let exporter = Exporter::start(settings(&addr, limits)).unwrap();
    let n = (0..50).find(|&n| exporter.push_blocking(event(n), Duration::from_millis(200)).is_err()).expect("the queue filled and stayed full");
    let summary = exporter.finish(Duration::ZERO);
    assert_eq!(summary.recorded_events, n, "{summary}");
    assert_eq!(summary.exported_events, 0, "{summary}");
    assert_eq!(summary.exported_events + summary.dropped_events + summary.failed_events, n, "{summary}");
}

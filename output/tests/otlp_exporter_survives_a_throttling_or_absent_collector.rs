//! The exporter against a collector that throttles (429 with Retry-After),
//! is unavailable (503), is absent at start, or never comes: every event
//! is exported or counted as dropped, and the queue stays under its cap.
//!
//! The collector here is a local stub on 127.0.0.1 (`stub_collector`)
//! that answers what each test scripts, because a real collector cannot be
//! made to answer 429 or 503 on demand. The real collectors (Jaeger) are
//! tested in the CLI's tests.

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use prost::Message;
use usertrace_output::otlp::proto::collector::logs::v1::ExportLogsServiceRequest;
use usertrace_output::otlp::{Compression, Exporter, ExporterSettings, QueueLimits};
use usertrace_output::timeline::{SPAN_DURATION_NS, SPAN_START_NS};
use usertrace_output::{Record, Value};

mod stub_collector;
use stub_collector::{job_done, Stub};

fn free_addr() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

fn settings(addr: &str, compression: Compression, limits: QueueLimits) -> ExporterSettings {
    let mut settings = stub_collector::settings(addr, limits, Duration::from_millis(50));
    settings.endpoint.headers = vec![("x-tenant".into(), "t1".into())];
    settings.endpoint.compression = compression;
    settings
}

fn event(n: u64) -> Record {
    job_done(n, 200)
}

fn log_count(body: &[u8], gzip: bool) -> usize {
    let body = if gzip {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(body).read_to_end(&mut out).unwrap();
        out
    } else {
        body.to_vec()
    };
    let request = ExportLogsServiceRequest::decode(&body[..]).expect("a protobuf logs request");
    request.resource_logs.iter().flat_map(|r| &r.scope_logs).map(|s| s.log_records.len()).sum()
}

#[test]
fn throttling_is_retried_after_the_collectors_retry_after_and_unavailability_with_backoff() {
    let addr = free_addr();
    let stub = Stub::start(&addr, vec![(429, Some("1")), (503, None)], Duration::ZERO);
    let limits = QueueLimits { max_batch_records: 1000, max_batch_age: Duration::from_millis(50), memory_cap_bytes: 16 << 20 };
    let exporter = Exporter::start(settings(&addr, Compression::Gzip, limits)).unwrap();
    for n in 0..10 {
        exporter.push(event(n));
    }
    let summary = exporter.finish(Duration::from_secs(10));
    assert_eq!((summary.recorded_events, summary.exported_events, summary.dropped_events, summary.failed_events), (10, 10, 0, 0), "{summary}");
    assert_eq!(summary.retries, 2, "{summary}");
    let seen = stub.seen();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.iter().all(|s| s.path == "/v1/logs" && s.gzip));
    let after_429 = seen[1].at - seen[0].at;
    assert!(after_429 >= Duration::from_secs(1), "Retry-After: 1 not honoured: {after_429:?}");
    let after_503 = seen[2].at - seen[1].at;
    assert!(after_503 >= Duration::from_millis(50) && after_503 < Duration::from_secs(1), "{after_503:?}");
    assert_eq!(log_count(&seen[2].body, true), 10);
}

#[test]
fn a_collector_absent_at_start_gets_everything_once_it_comes() {
    let addr = free_addr();
    let limits = QueueLimits { max_batch_records: 5, max_batch_age: Duration::from_millis(20), memory_cap_bytes: 16 << 20 };
    let exporter = Exporter::start(settings(&addr, Compression::None, limits)).unwrap();
    for n in 0..20 {
        exporter.push(event(n));
    }
    std::thread::sleep(Duration::from_millis(400));
    let stub = Stub::start(&addr, vec![], Duration::ZERO);
    let summary = exporter.finish(Duration::from_secs(10));
    assert_eq!((summary.exported_events, summary.dropped_events, summary.failed_events), (20, 0, 0), "{summary}");
    assert!(summary.retries >= 1, "it was down at first: {summary}");
    let sent: usize = stub.seen().iter().map(|s| log_count(&s.body, false)).sum();
    assert_eq!(sent, 20);
}

#[test]
fn a_collector_that_never_comes_costs_the_oldest_batches_and_memory_stays_capped() {
    let addr = free_addr();
    let one = usertrace_output::otlp::queue::approx_bytes(&event(0));
    let cap = 50 * one;
    let limits = QueueLimits { max_batch_records: 10, max_batch_age: Duration::from_millis(10), memory_cap_bytes: cap };
    let exporter = Exporter::start(settings(&addr, Compression::None, limits)).unwrap();
    let started = Instant::now();
    for n in 0..1000 {
        exporter.push(event(n));
    }
    assert!(started.elapsed() < Duration::from_secs(1), "pushing waited on the network: {:?}", started.elapsed());
    let summary = exporter.finish(Duration::from_millis(300));
    assert_eq!(summary.exported_events, 0);
    assert_eq!(summary.recorded_events, 1000);
    assert_eq!(summary.exported_events + summary.dropped_events + summary.failed_events, 1000, "{summary}");
    assert!(summary.dropped_events >= 900, "{summary}");
    assert!(summary.peak_queue_bytes <= cap, "{} > {cap}", summary.peak_queue_bytes);
    assert!(summary.last_error.is_some());
}

#[test]
fn a_collector_killed_mid_run_and_restarted_gets_what_came_meanwhile() {
    let addr = free_addr();
    let limits = QueueLimits { max_batch_records: 5, max_batch_age: Duration::from_millis(20), memory_cap_bytes: 16 << 20 };
    let first = Stub::start(&addr, vec![], Duration::ZERO);
    let exporter = Exporter::start(settings(&addr, Compression::None, limits)).unwrap();
    for n in 0..10 {
        exporter.push(event(n));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while first.seen().len() < 2 {
        assert!(Instant::now() < deadline, "the first collector got {:?}", first.seen().len());
        std::thread::sleep(Duration::from_millis(10));
    }
    let before: usize = first.seen().iter().map(|s| log_count(&s.body, false)).sum();
    drop(first);
    for n in 10..30 {
        exporter.push(event(n));
    }
    std::thread::sleep(Duration::from_millis(300));
    let second = Stub::start(&addr, vec![], Duration::ZERO);
    let summary = exporter.finish(Duration::from_secs(10));
    assert_eq!((summary.recorded_events, summary.exported_events, summary.dropped_events, summary.failed_events), (30, 30, 0, 0), "{summary}");
    assert!(summary.retries >= 1, "{summary}");
    let after: usize = second.seen().iter().map(|s| log_count(&s.body, false)).sum();
    assert_eq!((before, after), (10, 20));
}

#[test]
fn an_endpoint_that_takes_neither_signal_delivers_nothing() {
    let addr = free_addr();
    // A wrong path: every request answers 404.
    let stub = Stub::start(&addr, vec![(404, None); 10], Duration::ZERO);
    let limits = QueueLimits { max_batch_records: 100, max_batch_age: Duration::from_millis(20), memory_cap_bytes: 16 << 20 };
    let exporter = Exporter::start(settings(&addr, Compression::None, limits)).unwrap();
    for n in 0..10 {
        exporter.push(event(n));
    }
    let summary = exporter.finish(Duration::from_secs(5));
    assert_eq!((summary.exported_events, summary.failed_events, summary.refused_events), (0, 10, 10), "{summary}");
    assert_eq!(summary.signals_not_taken, [format!("http://{addr}/v1/logs")]);
    assert!(summary.to_string().contains("; of the failed, 10 refused by the endpoint, 0 not taken in time"), "{summary}");
    assert!(summary.to_string().contains("answered 404"), "{summary}");
    assert_eq!(stub.seen().len(), 1, "a signal not taken is not sent again");
}

/// A completed span (the core's span convention), mapped to a span.
fn completed_span(n: u64) -> Record {
    let Record::Event(mut e) = event(n) else { unreachable!() };
    e.event = "job".into();
    e.fields = vec![(SPAN_START_NS.into(), Value::Unsigned(500 + n)), (SPAN_DURATION_NS.into(), Value::Unsigned(10))];
    Record::Event(e)
}

#[test]
fn a_batch_of_only_log_records_to_a_traces_only_collector_counts_as_exported_once_it_takes_spans() {
    let addr = free_addr();
    // Jaeger-like: its first request is batch one's logs, answered 404;
    // then it takes batch two's spans. Batch three's logs are not sent.
    // (Real Jaeger answers the same, but which batch holds only log
    // records depends on timing there; the demo's test once flaked on it.)
    let stub = Stub::start(&addr, vec![(404, None)], Duration::ZERO);
    let limits = QueueLimits { max_batch_records: 3, max_batch_age: Duration::from_secs(60), memory_cap_bytes: 16 << 20 };
    let exporter = Exporter::start(settings(&addr, Compression::None, limits)).unwrap();
    let wait_for_requests = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while stub.seen().len() < n {
            assert!(Instant::now() < deadline, "the stub saw {:?}", stub.seen().iter().map(|s| &s.path).collect::<Vec<_>>());
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    (0..3).for_each(|n| exporter.push(event(n)));
    wait_for_requests(1);
    (3..6).for_each(|n| exporter.push(completed_span(n)));
    wait_for_requests(2);
    (6..9).for_each(|n| exporter.push(event(n)));
    let summary = exporter.finish(Duration::from_secs(5));
    let paths: Vec<String> = stub.seen().iter().map(|s| s.path.clone()).collect();
    assert_eq!(paths, ["/v1/logs", "/v1/traces"], "{summary}");
    assert_eq!((summary.recorded_events, summary.exported_events, summary.dropped_events, summary.failed_events), (9, 9, 0, 0), "{summary}");
    assert_eq!((summary.spans, summary.logs), (3, 0), "{summary}");
    assert_eq!(summary.signals_not_taken, [format!("http://{addr}/v1/logs")]);
}

#[test]
fn finishing_is_bounded_by_its_grace_period_even_if_the_collector_hangs() {
    // A collector that accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for conn in listener.incoming().take(3) {
            conns.push(conn);
        }
        std::thread::sleep(Duration::from_secs(3));
    });
    let limits = QueueLimits { max_batch_records: 100, max_batch_age: Duration::from_millis(10), memory_cap_bytes: 16 << 20 };
    let mut s = settings(&addr, Compression::None, limits);
    s.endpoint.timeout = Duration::from_secs(30);
    let exporter = Exporter::start(s).unwrap();
    for n in 0..10 {
        exporter.push(event(n));
    }
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    let summary = exporter.finish(Duration::from_millis(500));
    assert!(started.elapsed() < Duration::from_secs(2), "finish took {:?}", started.elapsed());
    assert_eq!(summary.exported_events + summary.dropped_events + summary.failed_events, 10, "{summary}");
    assert_eq!(summary.exported_events, 0);
    drop(held);
}

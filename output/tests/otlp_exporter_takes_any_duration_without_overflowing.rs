//! Durations that come from outside (a collector's `Retry-After`, the
//! caller's grace period, a configured batch age) may be as large as the
//! type allows: the exporter caps or saturates them, and neither its
//! thread nor the caller's panics.
//!
//! The collector here is a local stub on 127.0.0.1 (tiny_http), because a
//! real collector cannot be made to answer 429 with a `Retry-After` of
//! 2^64 - 1 seconds on demand.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use usertrace_output::otlp::{Clock, Compression, Endpoint, EndpointArgs, Exporter, ExporterSettings, QueueLimits, ResourceSettings};
use usertrace_output::{EventRecord, Record, Value};

/// Answers the scripted statuses (with their `Retry-After`), then 200s.
struct Stub {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Stub {
    fn start(script: Vec<(u16, Option<&'static str>)>) -> (Stub, String) {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("stub listens"));
        let addr = server.server_addr().to_ip().expect("an IP address").to_string();
        let s = Arc::clone(&server);
        let thread = std::thread::spawn(move || {
            let mut script = script.into_iter();
            for mut request in s.incoming_requests() {
                let _ = request.as_reader().read_to_end(&mut Vec::new());
                let (status, retry_after) = script.next().unwrap_or((200, None));
                let mut response = tiny_http::Response::empty(status);
                if let Some(v) = retry_after {
                    response.add_header(tiny_http::Header::from_bytes("Retry-After", v).unwrap());
                }
                let _ = request.respond(response);
            }
        });
        (Stub { server, thread: Some(thread) }, addr)
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn settings(addr: &str, limits: QueueLimits) -> ExporterSettings {
    // Resolved as the CLI does, so the test names only what it sets.
    let args = EndpointArgs { url: Some(format!("http://{addr}")), ..EndpointArgs::default() };
    let mut endpoint = Endpoint::resolve(&args, |_| None).expect("a valid endpoint");
    endpoint.headers = vec![];
    endpoint.timeout = Duration::from_secs(2);
    endpoint.compression = Compression::None;
    let resource = ResourceSettings { service_name: Some("durations".into()), host_name: "h".into(), attributes: vec![], ..ResourceSettings::default() };
    ExporterSettings {
        limits,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        ..ExporterSettings::new(endpoint, resource, Clock { unix_minus_monotonic_ns: 0 })
    }
}

fn event(n: u64) -> Record {
    Record::Event(EventRecord {
        time_ns: 1_000 + n,
        cpu: 0,
        pid: 7,
        tid: 7,
        comm: "worker".into(),
        process: "worker".into(),
        namespaces: None,
        event: "job_done".into(),
        fields: vec![("n".into(), Value::Unsigned(n))],
        error: None,
    })
}

fn quick() -> QueueLimits {
    QueueLimits { max_batch_records: 100, max_batch_age: Duration::from_millis(10), memory_cap_bytes: 1 << 20 }
}

#[test]
fn a_retry_after_of_u64_max_seconds_is_capped_and_the_batch_is_sent_again() {
    let (_stub, addr) = Stub::start(vec![(429, Some("18446744073709551615"))]);
    let mut s = settings(&addr, quick());
    s.max_retry_after = Duration::from_millis(200);
    let exporter = Exporter::start(s).unwrap();
    (0..10).for_each(|n| exporter.push(event(n)));
    let summary = exporter.finish(Duration::from_secs(10));
    assert_eq!((summary.exported_events, summary.dropped_events, summary.failed_events, summary.retries), (10, 0, 0, 1), "{summary}");
}

#[test]
fn a_grace_period_of_duration_max_waits_for_everything_and_returns() {
    let (_stub, addr) = Stub::start(vec![]);
    let exporter = Exporter::start(settings(&addr, quick())).unwrap();
    (0..10).for_each(|n| exporter.push(event(n)));
    let summary = exporter.finish(Duration::MAX);
    assert_eq!((summary.exported_events, summary.dropped_events, summary.failed_events), (10, 0, 0), "{summary}");
}

#[test]
fn a_batch_age_of_duration_max_only_seals_at_the_end() {
    let (_stub, addr) = Stub::start(vec![]);
    let exporter = Exporter::start(settings(&addr, QueueLimits { max_batch_age: Duration::MAX, ..quick() })).unwrap();
    (0..10).for_each(|n| exporter.push(event(n)));
    std::thread::sleep(Duration::from_millis(50));
    let summary = exporter.finish(Duration::from_secs(10));
    assert_eq!((summary.exported_events, summary.dropped_events, summary.failed_events), (10, 0, 0), "{summary}");
    assert_eq!(summary.last_error, None, "{summary}");
}

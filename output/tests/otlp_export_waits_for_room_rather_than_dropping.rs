//! `Exporter::push_blocking`, for a caller that has all its records at
//! hand (`usertrace export`): a full queue makes it wait for the exporter
//! to make room, not drop the oldest batches, so memory stays under the
//! cap and every event gets out; against a collector that never comes it
//! says so once the caller's patience is spent, and queues nothing more.
//!
//! The collector is a local stub on 127.0.0.1 (tiny_http) that answers
//! slowly, because a real collector cannot be made that slow on demand.

use std::net::TcpListener;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use usertrace_output::otlp::queue::approx_bytes;
use usertrace_output::otlp::{Clock, Endpoint, EndpointArgs, Exporter, ExporterSettings, QueueLimits, ResourceSettings};
use usertrace_output::{EventRecord, Record, Value};

struct SlowStub {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl SlowStub {
    fn start() -> (SlowStub, String) {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let addr = server.server_addr().to_ip().unwrap().to_string();
        let s = Arc::clone(&server);
        let thread = std::thread::spawn(move || {
            for mut request in s.incoming_requests() {
                let _ = request.as_reader().read_to_end(&mut Vec::new());
                std::thread::sleep(Duration::from_millis(5));
                let _ = request.respond(tiny_http::Response::empty(200));
            }
        });
        (SlowStub { server, thread: Some(thread) }, addr)
    }
}

impl Drop for SlowStub {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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

fn settings(addr: &str, limits: QueueLimits) -> ExporterSettings {
    let args = EndpointArgs { url: Some(format!("http://{addr}")), ..EndpointArgs::default() };
    let mut endpoint = Endpoint::resolve(&args, |_| None).expect("a valid endpoint");
    endpoint.timeout = Duration::from_secs(2);
    let resource = ResourceSettings { host_name: "h".into(), ..ResourceSettings::default() };
    ExporterSettings {
        limits,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(50),
        ..ExporterSettings::new(endpoint, resource, Clock { unix_minus_monotonic_ns: 0 })
    }
}

#[test]
fn a_full_queue_makes_the_caller_wait_and_nothing_is_dropped() {
    let (_stub, addr) = SlowStub::start();
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

//! What the exporter tests share: a stub collector on 127.0.0.1, the
//! exporter settings that point at it, and the event they send.
//!
//! The stub (tiny_http) answers what each test scripts (statuses with
//! their `Retry-After`, then 200s, each after an optional delay), because
//! a real collector cannot be made to answer 429 or 503, or to be slow,
//! on demand. The real collectors are tested in the CLI's tests.
#![allow(dead_code)] // each test file uses its own part

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use usertrace_output::otlp::{Clock, Endpoint, EndpointArgs, ExporterSettings, QueueLimits, ResourceSettings};
use usertrace_output::{EventRecord, Record, Value};

/// One request as the stub saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at: Instant,
    pub path: String,
    pub gzip: bool,
    pub body: Vec<u8>,
}

/// A stub collector answering the scripted statuses, then 200s.
pub struct Stub {
    /// Where it listens (`127.0.0.1:PORT`).
    pub addr: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Stub {
    /// Listens on `addr` (`127.0.0.1:0` for any free port), answering
    /// each request after `delay`.
    pub fn start(addr: &str, script: Vec<(u16, Option<&'static str>)>, delay: Duration) -> Stub {
        let server = Arc::new(tiny_http::Server::http(addr).expect("stub listens"));
        let addr = server.server_addr().to_ip().expect("an IP address").to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, log) = (Arc::clone(&server), Arc::clone(&seen));
        let thread = std::thread::spawn(move || {
            let mut script = script.into_iter();
            for mut request in s.incoming_requests() {
                let mut body = Vec::new();
                let _ = request.as_reader().read_to_end(&mut body);
                let gzip = request.headers().iter().any(|h| h.field.equiv("Content-Encoding") && h.value == "gzip");
                log.lock().unwrap().push(Seen { at: Instant::now(), path: request.url().to_owned(), gzip, body });
                std::thread::sleep(delay);
                let (status, retry_after) = script.next().unwrap_or((200, None));
                let mut response = tiny_http::Response::empty(status);
                if let Some(v) = retry_after {
                    response.add_header(tiny_http::Header::from_bytes("Retry-After", v).unwrap());
                }
                let _ = request.respond(response);
            }
        });
        Stub { addr, seen, server, thread: Some(thread) }
    }

    /// The requests so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
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

/// Exporter settings for `addr`, resolved as the CLI does so that a test
/// names only what it sets: a 2 s request timeout and a quick backoff
/// from `initial_backoff` up to four times it.
pub fn settings(addr: &str, limits: QueueLimits, initial_backoff: Duration) -> ExporterSettings {
    let args = EndpointArgs { url: Some(format!("http://{addr}")), ..EndpointArgs::default() };
    let mut endpoint = Endpoint::resolve(&args, |_| None).expect("a valid endpoint");
    endpoint.timeout = Duration::from_secs(2);
    let resource = ResourceSettings { service_name: Some("stub-test".into()), host_name: "h".into(), ..ResourceSettings::default() };
    ExporterSettings {
        limits,
        initial_backoff,
        max_backoff: initial_backoff * 4,
        ..ExporterSettings::new(endpoint, resource, Clock { unix_minus_monotonic_ns: 0 })
    }
}

/// Event `n` of a worker: `job_done` with field `n`, and `pad_bytes` of
/// padding (a field `pad`) when nonzero, to make records of a known size.
pub fn job_done(n: u64, pad_bytes: usize) -> Record {
    let mut fields = vec![("n".into(), Value::Unsigned(n))];
    if pad_bytes > 0 {
        fields.push(("pad".into(), Value::Str("x".repeat(pad_bytes))));
    }
    Record::Event(EventRecord {
        time_ns: 1_000 + n,
        cpu: 0,
        pid: 7,
        tid: 7,
        comm: "worker".into(),
        process: "worker".into(),
        namespaces: None,
        event: "job_done".into(),
        tracepoint: None,
        fields,
        error: None,
        stack: Vec::new(),
    })
}

//! `usertrace export` exits 0 only if the endpoint took every event, and
//! its summary counts what was taken, refused and never sent, and why.
//! A span still open at the end of the file is sent then, by the final
//! flush, and counts by what became of that request.
//!
//! The endpoints here are local stubs on 127.0.0.1 (tiny_http, or a bare
//! listener that never answers), or a free port nobody listens on,
//! because a real collector cannot be made to answer 500 or to hang on
//! demand.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;
use std::thread::JoinHandle;

use usertrace_output::{jsonl, Record, Value};

struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

mod support;

fn event(n: u64, fields: Vec<(String, Value)>) -> Record {
    support::worker_event(n, "job", fields)
}

/// `logs` plain events, then one span begun and never ended.
fn recording(name: &str, logs: u64) -> TempFile {
    let path = std::env::temp_dir().join(format!("usertrace-export-truth-{}-{name}.jsonl", std::process::id()));
    let mut records: Vec<Record> = (0..logs).map(|n| event(n, vec![("n".into(), Value::Unsigned(n))])).collect();
    records.push(event(100, vec![("span_begin".into(), Value::Unsigned(1))]));
    jsonl::write_file(&path, &records).unwrap();
    TempFile(path)
}

fn export(file: &TempFile, endpoint: &str, timeout: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_usertrace"));
    cmd.args(["export", file.0.to_str().unwrap(), "--otlp", endpoint, "--timeout", timeout]);
    for var in ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_RESOURCE_ATTRIBUTES"] {
        cmd.env_remove(var);
    }
    cmd.output().unwrap()
}

/// Answers 500 on paths ending in `refused`, 200 on the others.
struct Stub {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
    url: String,
}

impl Stub {
    fn start(refused: &'static str) -> Stub {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let s = Arc::clone(&server);
        let thread = std::thread::spawn(move || {
            for mut request in s.incoming_requests() {
                let _ = request.as_reader().read_to_end(&mut Vec::new());
                let status = if request.url().ends_with(refused) { 500 } else { 200 };
                let _ = request.respond(tiny_http::Response::empty(status));
            }
        });
        Stub { server, thread: Some(thread), url }
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

fn summary(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr.lines().find(|l| l.starts_with("usertrace export: OTLP: ")).unwrap_or_else(|| panic!("no summary in {stderr}")).to_owned()
}

#[test]
fn an_open_span_sent_to_nobody_is_not_exported() {
    let file = recording("nobody", 0);
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = export(&file, &format!("http://127.0.0.1:{port}"), "1");
    let line = summary(&out);
    assert_eq!(out.status.code(), Some(1), "{line}");
    assert!(
        line.starts_with("usertrace export: OTLP: 0 events exported (0 spans, 0 log records), 0 dropped (queue full or unsent at exit), 1 failed; "),
        "{line}"
    );
    assert!(line.contains("1 not taken in time"), "{line}");
}

#[test]
fn an_open_span_refused_with_500_is_counted_refused() {
    let file = recording("refused", 0);
    let stub = Stub::start("/v1/traces");
    let out = export(&file, &stub.url, "5");
    let line = summary(&out);
    assert_eq!(out.status.code(), Some(1), "{line}");
    assert!(line.contains("0 events exported (0 spans, 0 log records), 0 dropped (queue full or unsent at exit), 1 failed; "), "{line}");
    assert!(line.contains("1 refused by the endpoint"), "{line}");
    assert!(line.contains("/v1/traces: HTTP 500"), "{line}");
}

#[test]
fn log_records_taken_beside_a_span_refused_count_each_by_its_own_request() {
    let file = recording("mixed", 3);
    let stub = Stub::start("/v1/traces");
    let out = export(&file, &stub.url, "5");
    let line = summary(&out);
    assert_eq!(out.status.code(), Some(1), "{line}");
    assert!(line.contains("3 events exported (0 spans, 3 log records), 0 dropped (queue full or unsent at exit), 1 failed; "), "{line}");
}

#[test]
fn an_open_span_sent_to_an_endpoint_that_hangs_fails_within_the_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    // Accept and hold connections without answering; the thread ends with the test.
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(8).collect();
        std::thread::sleep(std::time::Duration::from_secs(30));
        drop(held);
    });
    let file = recording("hangs", 0);
    let out = export(&file, &url, "1");
    let line = summary(&out);
    assert_eq!(out.status.code(), Some(1), "{line}");
    assert!(line.contains("0 events exported (0 spans, 0 log records), 0 dropped (queue full or unsent at exit), 1 failed; "), "{line}");
    assert!(line.contains("1 not taken in time"), "{line}");
}

#[test]
fn everything_taken_exits_0() {
    let file = recording("taken", 3);
    let stub = Stub::start("/never");
    let out = export(&file, &stub.url, "5");
    let line = summary(&out);
    assert_eq!(out.status.code(), Some(0), "{line}");
    assert!(line.contains("4 events exported (1 spans, 3 log records), 0 dropped (queue full or unsent at exit), 0 failed; "), "{line}");
}

//! `usertrace export` reads its file as it sends it, into a queue bounded
//! by `[otlp.queue] memory_cap_mib`: a file several times the cap gets
//! out whole (reading waits for room, nothing is dropped) with the queue
//! never above its cap; against an endpoint that never answers, reading
//! gives up after --timeout and the summary counts the rest as never sent.
//!
//! The collector is a local stub on 127.0.0.1 (tiny_http) that answers
//! slowly, and the absent one a free port nobody listens on, because a
//! real collector cannot be made slow on demand.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use usertrace_output::{jsonl, Record, Value};

const EVENTS: u64 = 12_000;

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

mod support;

/// A recording of `EVENTS` events of about 400 bytes each (some 8 MiB
/// in memory), and a config whose queue holds 1 MiB.
fn scratch(name: &str, endpoint: &str) -> (Scratch, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("usertrace-export-stream-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let records: Vec<Record> = (0..EVENTS)
        .map(|n| {
            support::worker_event(n, "job_done", vec![("n".into(), Value::Unsigned(n)), ("pad".into(), Value::Str("x".repeat(300)))])
        })
        .collect();
    let file = dir.join("recording.jsonl");
    jsonl::write_file(&file, &records).unwrap();
    let config = dir.join("usertrace.toml");
    std::fs::write(&config, format!("[otlp]\nendpoint = \"{endpoint}\"\n\n[otlp.queue]\nmemory_cap_mib = 1\nmax_batch_records = 500\n")).unwrap();
    (Scratch(dir), file, config)
}

fn export(file: &Path, config: &Path, timeout: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_usertrace"));
    cmd.args(["export", file.to_str().unwrap(), "--config", config.to_str().unwrap(), "--timeout", timeout]);
    for var in ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_RESOURCE_ATTRIBUTES"] {
        cmd.env_remove(var);
    }
    cmd.output().unwrap()
}

/// A number in the summary, just before `label`.
fn count(summary: &str, label: &str) -> u64 {
    let at = summary.find(label).unwrap_or_else(|| panic!("no {label:?} in {summary}"));
    summary[..at].split([' ', '(']).rfind(|w| !w.is_empty()).and_then(|n| n.parse().ok()).unwrap()
}

fn summary(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr.lines().find(|l| l.starts_with("usertrace export: OTLP: ")).unwrap_or_else(|| panic!("no summary in {stderr}")).to_owned()
}

struct SlowStub {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for SlowStub {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_file_eight_times_the_queue_gets_out_whole_with_the_queue_under_its_cap() {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    let s = Arc::clone(&server);
    let thread = std::thread::spawn(move || {
        for mut request in s.incoming_requests() {
            let _ = request.as_reader().read_to_end(&mut Vec::new());
            std::thread::sleep(Duration::from_millis(10));
            let _ = request.respond(tiny_http::Response::empty(200));
        }
    });
    let _stub = SlowStub { server, thread: Some(thread) };
    let (_dir, file, config) = scratch("whole", &url);
    let out = export(&file, &config, "30");
    let line = summary(&out);
    assert_eq!(out.status.code(), Some(0), "{line}");
    assert!(
        line.starts_with(&format!(
            "usertrace export: OTLP: {EVENTS} events exported (0 spans, {EVENTS} log records), 0 dropped (queue full or unsent at exit), 0 failed; "
        )),
        "{line}"
    );
    assert!(count(&line, " KiB") <= 1024, "the queue outgrew its 1 MiB: {line}");
}

#[test]
fn an_endpoint_that_never_answers_stops_the_reading_after_the_timeout_and_the_rest_counts_as_never_sent() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (_dir, file, config) = scratch("absent", &format!("http://127.0.0.1:{port}"));
    let out = export(&file, &config, "1");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = summary(&out);
    assert_eq!(out.status.code(), Some(1), "{line}");
    assert_eq!(count(&line, " events exported"), 0, "{line}");
    assert_eq!(count(&line, " dropped") + count(&line, " failed;"), EVENTS, "every event counted: {line}");
    assert!(stderr.contains("usertrace export: the endpoint took nothing for 1 s, so the rest of"), "{stderr}");
    assert!(count(&line, " KiB") <= 1024, "{line}");
}

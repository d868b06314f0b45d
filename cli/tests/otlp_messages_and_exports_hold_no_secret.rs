//! What `usertrace` prints about its OTLP settings and failures never
//! holds a secret: not a header's value, not the password in an endpoint
//! URL, not the line of a config file that has one; and a process's
//! command line (which often holds one) is left out of the export when
//! asked.
//!
//! The collector here is a local stub on 127.0.0.1 (tiny_http) that
//! answers 400, or 200 and records what it was sent, because a real
//! collector cannot be made to refuse a request on demand, and the
//! resource attributes of what arrives are checked exactly here.

mod otel_components;

use std::process::Output;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use otel_components::{recording, TempDir};
use prost::Message;
use usertrace_output::jsonl;
use usertrace_output::otlp::proto::collector::trace::v1::ExportTraceServiceRequest;
use usertrace_output::otlp::proto::common::v1::any_value::Value as AnyValue;

const SECRET: &str = "s3cret";

mod support;
use support::usertrace_without_otel_env as usertrace;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// One request as the stub saw it: its path, headers (`name: value`,
/// names lowercased) and body.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: Vec<String>,
    body: Vec<u8>,
}

struct Stub {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Stub {
    fn answering(status: u16) -> Stub {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("stub listens"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, log) = (Arc::clone(&server), Arc::clone(&seen));
        let thread = std::thread::spawn(move || {
            for mut request in s.incoming_requests() {
                let mut body = Vec::new();
                let _ = request.as_reader().read_to_end(&mut body);
                let headers = request.headers().iter().map(|h| format!("{}: {}", h.field.as_str().as_str().to_ascii_lowercase(), h.value)).collect();
                log.lock().unwrap().push(Seen { path: request.url().to_owned(), headers, body });
                let _ = request.respond(tiny_http::Response::empty(status));
            }
        });
        Stub { port, seen, server, thread: Some(thread) }
    }

    fn seen(&self) -> Vec<Seen> {
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

fn recording_file(dir: &TempDir) -> String {
    let file = dir.0.join("recording.jsonl");
    jsonl::write_file(&file, &recording(7_000_000_000_000)).unwrap();
    file.to_str().unwrap().to_owned()
}

#[test]
fn a_bad_header_entry_is_named_by_its_place_and_name_never_by_its_value() {
    let missing = "/nonexistent/recording.jsonl";
    let url = ["--otlp", "http://127.0.0.1:9"];
    for (headers, says) in [
        ("x-tenant=a,Authorization: Bearer s3cret=", "OTEL_EXPORTER_OTLP_HEADERS entry 2 is not usable: its name is not a header name"),
        ("Bearer s3cret", "OTEL_EXPORTER_OTLP_HEADERS entry 1 is not usable: it has no '='"),
        ("x-api-key=s3cret%0D%0A", "OTEL_EXPORTER_OTLP_HEADERS entry 1 (x-api-key) is not usable: its value holds a control character"),
    ] {
        let out = usertrace(&[&["export", missing][..], &url[..]].concat(), &[("OTEL_EXPORTER_OTLP_HEADERS", headers)]);
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{e}");
        assert!(e.contains(says), "{e:?} does not say {says:?}");
        assert!(!e.contains(SECRET), "{e:?} shows the header's value");
    }
}

#[test]
fn the_password_in_the_endpoint_url_is_sent_as_basic_auth_and_never_printed() {
    let collector = Stub::answering(400);
    let dir = TempDir::new("otlp-no-secret-url");
    let file = recording_file(&dir);
    let url = format!("http://alice:{SECRET}@127.0.0.1:{}", collector.port);
    let out = usertrace(&["export", &file, "--otlp", &url], &[]);
    let e = stderr(&out);
    assert!(e.contains(&format!("last error: http://127.0.0.1:{}/v1/", collector.port)), "{e}");
    assert!(!e.contains(SECRET), "{e:?} shows the URL's password");
    let seen = collector.seen();
    assert!(!seen.is_empty(), "nothing was sent: {e}");
    // base64("alice:s3cret")
    assert!(seen.iter().all(|s| s.headers.iter().any(|h| h == "authorization: Basic YWxpY2U6czNjcmV0")), "{seen:?}");

    let out = usertrace(&["export", &file, "--otlp", &format!("ftp://alice:{SECRET}@h/")], &[]);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("\"ftp://h/\" is not usable") && !e.contains(SECRET), "{e}");
}

#[test]
fn a_config_file_error_names_the_line_and_key_but_never_shows_the_line() {
    let dir = TempDir::new("otlp-no-secret-toml");
    let config = dir.0.join("agent.toml");
    for (text, says) in [
        // A string left open.
        (format!("[otlp]\nendpoint = \"http://h\"\nheaders = {{ \"authorization\" = \"Bearer {SECRET} }}\n"), "line 3"),
        // A value of the wrong type.
        (format!("[otlp]\ntimeout_ms = \"{SECRET}\"\n"), "line 2"),
        (format!("[otlp]\nendpoint = \"http://h\"\n[otlp.headers]\nauthorization = Bearer-{SECRET}\n"), "line 4"),
    ] {
        std::fs::write(&config, &text).unwrap();
        let out = usertrace(&["export", "/nonexistent/recording.jsonl", "--config", config.to_str().unwrap()], &[]);
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{e}");
        assert!(e.contains(&format!("cannot use the config file {}", config.display())) && e.contains(says), "{e:?} does not say {says:?}");
        assert!(!e.contains(SECRET), "{e:?} shows the line that holds the secret");
    }
    std::fs::write(&config, "[otlp]\ntimeout_ms = \"soon\"\n").unwrap();
    let e = stderr(&usertrace(&["export", "/nonexistent/recording.jsonl", "--config", config.to_str().unwrap()], &[]));
    assert!(e.contains("otlp.timeout_ms"), "{e:?} does not name the key");
}

/// The `process.command_line` of each resource the collector was sent.
fn command_lines(collector: &Stub) -> Vec<Option<String>> {
    let mut lines = Vec::new();
    for seen in collector.seen().iter().filter(|s| s.path == "/v1/traces") {
        let request = ExportTraceServiceRequest::decode(&seen.body[..]).expect("an OTLP trace request");
        for spans in &request.resource_spans {
            let attributes = &spans.resource.as_ref().expect("a resource").attributes;
            let line = attributes.iter().find(|kv| kv.key == "process.command_line").map(|kv| match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(AnyValue::StringValue(s)) => s.clone(),
                other => panic!("process.command_line is {other:?}"),
            });
            lines.push(line);
        }
    }
    lines
}

#[test]
fn command_lines_are_left_out_of_the_export_when_asked() {
    let dir = TempDir::new("otlp-no-command-line");
    let file = recording_file(&dir);
    let config = dir.0.join("agent.toml");

    let collector = Stub::answering(200);
    let out = usertrace(&["export", &file, "--otlp", &format!("http://127.0.0.1:{}", collector.port)], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut lines = command_lines(&collector);
    lines.sort();
    assert_eq!(lines, [Some("java -jar shop.jar".into()), Some("order-service --port 8080".into()), Some("python3.11 worker.py".into())]);

    let collector = Stub::answering(200);
    let out = usertrace(&["export", &file, "--otlp", &format!("http://127.0.0.1:{}", collector.port), "--otlp-no-command-line"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(command_lines(&collector), [None, None, None]);

    let collector = Stub::answering(200);
    std::fs::write(&config, format!("[otlp]\nendpoint = \"http://127.0.0.1:{}\"\ncommand_line = false\n", collector.port)).unwrap();
    let out = usertrace(&["export", &file, "--config", config.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(command_lines(&collector), [None, None, None]);
}

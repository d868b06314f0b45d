//! `usertrace export` to an endpoint that answers with a redirect fails,
//! naming where it pointed, and sends nothing (no API key) there.
//!
//! Both servers are local stubs on 127.0.0.1 (tiny_http), because a real
//! collector cannot be made to answer 307 on demand.

mod otel_components;

use std::process::Command;
use std::sync::{Arc, Mutex};

use otel_components::{recording, TempDir};
use usertrace_output::jsonl;

/// A stub answering `status` with `location`, counting what it is sent.
fn stub(status: u16, location: Option<String>) -> (u16, Arc<Mutex<Vec<String>>>, Arc<tiny_http::Server>) {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("stub listens"));
    let port = server.server_addr().to_ip().expect("an IP address").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s, log) = (Arc::clone(&server), Arc::clone(&seen));
    std::thread::spawn(move || {
        for request in s.incoming_requests() {
            log.lock().unwrap().push(format!("{} {}", request.method(), request.url()));
            let mut response = tiny_http::Response::empty(status);
            if let Some(l) = &location {
                response.add_header(tiny_http::Header::from_bytes("Location", l.as_bytes()).unwrap());
            }
            let _ = request.respond(response);
        }
    });
    (port, seen, server)
}

#[test]
fn a_redirecting_endpoint_fails_the_export_and_the_redirect_target_gets_nothing() {
    let dir = TempDir::new("export-no-redirect");
    let file = dir.0.join("recording.jsonl");
    jsonl::write_file(&file, &recording(7_000_000_000_000)).unwrap();
    let (elsewhere, elsewhere_seen, _e) = stub(200, None);
    let (collector, collector_seen, _c) = stub(307, Some(format!("http://127.0.0.1:{elsewhere}/v1/traces")));
    let out = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["export", file.to_str().unwrap(), "--otlp", &format!("http://127.0.0.1:{collector}")])
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k3y")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("HTTP 307: redirects to http://127.0.0.1:{elsewhere}/v1/traces")), "{stderr}");
    assert!(stderr.contains("0 events exported"), "{stderr}");
    assert_eq!(elsewhere_seen.lock().unwrap().clone(), Vec::<String>::new());
    assert!(!collector_seen.lock().unwrap().is_empty());
}

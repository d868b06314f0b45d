//! `usertrace export` reads its file as it sends it, so a bad line is
//! found after the lines before it went out: it stops there, names the
//! line, exits 1, and its summary counts what it did send.
//!
//! The collector is a local stub on 127.0.0.1 (tiny_http) that takes
//! everything: only a stub can be asked afterwards exactly what it got.

use std::process::Command;
use std::sync::{Arc, Mutex};

use usertrace_output::{jsonl, Value};

mod support;

fn line(n: u64) -> Vec<u8> {
    let record = support::worker_event(n, "tick", vec![("n".into(), Value::Unsigned(n))]);
    let mut out = Vec::new();
    jsonl::write_record(&record, &mut out);
    out
}

#[test]
fn the_bad_line_is_named_and_what_came_before_it_is_sent_and_counted() {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    let requests = Arc::new(Mutex::new(0));
    let (s, seen) = (Arc::clone(&server), Arc::clone(&requests));
    let stub = std::thread::spawn(move || {
        for mut request in s.incoming_requests() {
            let _ = request.as_reader().read_to_end(&mut Vec::new());
            *seen.lock().unwrap() += 1;
            let _ = request.respond(tiny_http::Response::empty(200));
        }
    });
    let file = std::env::temp_dir().join(format!("usertrace-export-bad-line-{}.jsonl", std::process::id()));
    let mut text: Vec<u8> = (0..3).flat_map(line).collect();
    text.extend_from_slice(b"{\"type\":\"event\",\"time_ns\":\n");
    text.extend(line(3));
    std::fs::write(&file, &text).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["export", file.to_str().unwrap(), "--otlp", &url, "--timeout", "5"])
        .env_remove("OTEL_EXPORTER_OTLP_HEADERS")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    server.unblock();
    let _ = stub.join();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("usertrace export: {}: line 4: ", file.display())), "{stderr}");
    assert!(stderr.contains("nothing after it was read"), "{stderr}");
    assert!(
        stderr.contains("usertrace export: OTLP: 3 events exported (0 spans, 3 log records), 0 dropped (queue full or unsent at exit), 0 failed; "),
        "{stderr}"
    );
    assert_eq!(*requests.lock().unwrap(), 1, "one batch of the three: {stderr}");
}

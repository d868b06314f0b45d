//! The front of the four-language demo (`harness/demo`): it makes requests
//! and sends each one, by its id, down a chain of services written in the
//! other languages, each started by the one before with a pipe on its stdin
//! and stdout:
//!
//!   demo-front (Rust) → service (C) → worker.py (Python) → Lookup (Java)
//!
//! A request is one line, `ID TRACEPARENT PATH`, and its reply one line,
//! `ID RESULT`: the W3C `traceparent` of the caller's span (`-` for none),
//! as an HTTP request's header would carry it, so that each request is one
//! trace across the four processes. Each stage runs as its own service
//! (`OTEL_SERVICE_NAME`, which harness/demo sets for each).
//! Before the first, each stage says `ready` once it and the stages after it
//! are set up, so that no request's span holds a program's start (under
//! emulation, the JVM's alone takes tens of seconds).
//! Each stage wraps its part in a span carrying the request id, so the
//! timeline shows every request as nested spans across four processes.
//!
//!   demo-front REQUESTS NEXT-STAGE-COMMAND...

#![deny(unsafe_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};

mod events {
    usertrace::tracepoints! {
        provider demo;
        /// One request, from the front's point of view: all stages below.
        pub span request(request_id: u64, path: &str);
        /// The chain answered.
        pub fn reply(request_id: u64, result: &str, ok: bool);
        /// The front started, with how many requests it will make.
        pub fn started(requests: u32, version: &str);
    }
}

const PATHS: [&str; 4] = ["/", "/index.html", "/api/v1/users", "/café"];

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let requests: u32 = match args.next().map(|n| n.parse()) {
        Some(Ok(n)) => n,
        _ => {
            eprintln!("usage: demo-front REQUESTS NEXT-STAGE-COMMAND...");
            return ExitCode::from(2);
        }
    };
    let next: Vec<String> = args.collect();
    if next.is_empty() {
        eprintln!("demo-front: give the next stage's command after the request count");
        return ExitCode::from(2);
    }
    if let Err(e) = events::PROVIDER.register() {
        eprintln!("demo-front: tracing is off: {e}");
    }
    let mut child = match Command::new(&next[0]).args(&next[1..]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("demo-front: cannot start {}: {e}", next[0]);
            return ExitCode::from(1);
        }
    };
    let mut to_next = child.stdin.take().expect("piped");
    let mut from_next = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    if from_next.read_line(&mut line).is_err() || line != "ready\n" {
        eprintln!("demo-front: the chain did not say it was ready");
        return ExitCode::from(1);
    }
    let _ = usertrace::emit!(events::started(requests, env!("CARGO_PKG_VERSION")));

    for id in 1..=u64::from(requests) {
        let path = PATHS[id as usize % PATHS.len()];
        // The root of the request's trace: each stage begins its span under
        // the traceparent its caller hands it ("-" while nobody records).
        let span = usertrace::span!(events::request(id, path));
        let traceparent = span.as_ref().ok().and_then(|s| s.traceparent());
        let traceparent = traceparent.as_ref().map_or("-", |t| t.as_str());
        if writeln!(to_next, "{id} {traceparent} {path}").and_then(|()| to_next.flush()).is_err() {
            eprintln!("demo-front: the next stage went away at request {id}");
            return ExitCode::from(1);
        }
        line.clear();
        if from_next.read_line(&mut line).unwrap_or(0) == 0 {
            eprintln!("demo-front: no reply to request {id}");
            return ExitCode::from(1);
        }
        let result = line.trim_end().split_once(' ').map_or("", |(_, r)| r);
        let _ = usertrace::emit!(events::reply(id, result, !result.starts_with("error")));
    }
    drop(to_next); // end of input: each stage exits in turn
    match child.wait() {
        Ok(status) if status.success() => {
            println!("demo-front: {requests} requests answered by all four languages");
            ExitCode::SUCCESS
        }
        Ok(status) => {
            eprintln!("demo-front: the chain ended with {status}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("demo-front: {e}");
            ExitCode::from(1)
        }
    }
}

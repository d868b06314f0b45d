//! A pretend request handler with three tracepoints. Run it under
//! `usertrace record -e 'demo_*' -- rust-demo` to see its events.

#![deny(unsafe_code)]

use std::time::{Duration, Instant};

mod events {
    usertrace::tracepoints! {
        provider demo;
        /// One request was served.
        pub fn request(id: u64, path: &str, status: u16, cached: bool, latency_ms: f64);
        /// The worker's cache was flushed.
        pub fn cache_flush(entries: u32);
        /// The worker started.
        pub fn started(version: &str);
    }
}

fn main() {
    let count: u64 = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(5);
    // Register up front so tracers can see the events before the first one.
    if let Err(e) = events::PROVIDER.register() {
        eprintln!("rust-demo: tracing is off: {e}");
    }
    let _ = usertrace::emit!(events::started(env!("CARGO_PKG_VERSION")));
    let paths = ["/", "/index.html", "/api/v1/users", "/café"];
    for id in 0..count {
        let start = Instant::now();
        std::thread::sleep(Duration::from_millis(10));
        let path = paths[id as usize % paths.len()];
        let latency_ms = start.elapsed().as_secs_f64() * 1e3;
        let status = if path == "/api/v1/users" { 503 } else { 200 };
        if let Err(e) = usertrace::emit!(events::request(id, path, status, id % 2 == 0, latency_ms)) {
            eprintln!("rust-demo: {e}");
        }
    }
    let _ = usertrace::emit!(events::cache_flush(count as u32));
    println!("rust-demo: served {count} requests");
}

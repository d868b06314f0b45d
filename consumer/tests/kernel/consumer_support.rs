//! What the consumer's kernel tests share: the `ut_emit` producer, and a
//! session recorded until that producer exits.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use usertrace_consumer::{Event, Output, Session, SessionOptions, Stats};

/// The `ut_emit` example, built next to this test binary by `cargo test`.
pub fn ut_emit() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join("examples/ut_emit");
    assert!(path.exists(), "{} is missing: build with `cargo test --examples`", path.display());
    path
}

/// A running `ut_emit`, registered and waiting for a tracer.
pub struct Producer {
    pub child: Child,
    pub pid: u32,
}

pub fn start(args: &[&str]) -> Producer {
    let mut child = Command::new(ut_emit()).args(args).stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let pid = line.trim().strip_prefix("ready ").unwrap_or_else(|| panic!("ut_emit said {line:?}")).parse().unwrap();
    Producer { child, pid }
}

pub fn options(pattern: &str) -> SessionOptions {
    SessionOptions { patterns: vec![pattern.to_owned()], ..SessionOptions::default() }
}

/// Everything a session yielded until `child` exited (then flushed).
pub struct Recording {
    pub events: Vec<Event>,
    pub outputs: Vec<Output>,
    pub stats: Stats,
}

pub fn record_until_exit(session: &mut Session, child: &mut Child) -> Recording {
    let start = Instant::now();
    let mut outputs = Vec::new();
    loop {
        outputs.extend(session.poll(Duration::from_millis(50)).unwrap());
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "producer failed: {status}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "producer did not finish");
    }
    outputs.extend(session.flush());
    let events = outputs
        .iter()
        .filter_map(|o| match o {
            Output::Event(e) => Some(e.clone()),
            _ => None,
        })
        .collect();
    Recording { events, outputs, stats: session.stats() }
}

/// The value of an unsigned field.
pub fn unsigned(event: &Event, name: &str) -> u64 {
    match event.fields().unwrap().into_iter().find(|f| f.0 == name) {
        Some((_, usertrace_consumer::FieldValue::Unsigned(v))) => v,
        other => panic!("field {name} of {event:?}: {other:?}"),
    }
}

/// A name unique to this test run.
pub fn unique(prefix: &str) -> String {
    crate::support::unique_name(prefix)
}

//! What the EventHeader kernel tests share: the `eventheader_producer`
//! example, and the yardstick of `tracepoint_decode`'s own JSON.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

// library_json takes these from its parent.
use usertrace_consumer::{Event, EventFormat, FieldValue};

use crate::consumer_support::Producer;

#[path = "../support/eventheader_json.rs"]
pub mod library_json;

/// The producer's name as the kernel keeps it: 15 bytes of its file name.
pub const PRODUCER_COMM: &str = "eventheader_pro";

/// The `eventheader_producer` example.
pub fn producer_path() -> PathBuf {
    example_path("eventheader_producer")
}

/// A consumer example, built next to this test binary by `cargo build --examples`.
pub fn example_path(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join("examples").join(name);
    assert!(path.exists(), "{} is missing: build with `cargo build --examples -p usertrace-consumer`", path.display());
    path
}

/// A running `eventheader_producer`, registered and waiting to be enabled;
/// with `exec`, it execs that path once it has written its events.
pub fn start_producer(exec: Option<&Path>) -> Producer {
    start_example("eventheader_producer", exec)
}

/// A running example that prints `ready <pid>` once registered.
pub fn start_example(name: &str, exec: Option<&Path>) -> Producer {
    let mut command = Command::new(example_path(name));
    command.args(exec).stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let pid = line.trim().strip_prefix("ready ").unwrap_or_else(|| panic!("producer said {line:?}")).parse().unwrap();
    Producer { child, pid }
}

/// The event's own name, from its `meta.event` field.
pub fn event_name(event: &Event) -> String {
    let fields = event.fields().unwrap();
    let (_, value) = fields.iter().find(|(n, _)| n == "meta.event").unwrap_or_else(|| panic!("{fields:?}"));
    value.to_string()
}

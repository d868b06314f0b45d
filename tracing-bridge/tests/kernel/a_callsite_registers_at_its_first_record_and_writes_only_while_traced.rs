//! A callsite's tracepoint exists from its first record on (registered
//! with that record's types), and is written only while a tracer (here
//! ftrace) listens: before and after, its records write nothing. Dropping
//! the layer unregisters it.

use tracing_subscriber::prelude::*;

use crate::support::*;

/// The `n` of each of `event`'s lines in ftrace's buffer.
fn traced_n(event: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(tracefs().join("trace")).unwrap();
    let marker = format!(": {event}:");
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains(&marker))
        .map(|l| {
            let value = l.split_once(" n=").unwrap_or_else(|| panic!("no n in {l}")).1.split_whitespace().next().unwrap();
            value.strip_prefix("0x").map_or_else(|| value.parse().unwrap(), |hex| u64::from_str_radix(hex, 16).unwrap())
        })
        .collect()
}

fn set_ftrace(event: &str, on: bool) {
    let path = tracefs().join("events/user_events").join(event).join("enable");
    std::fs::write(&path, if on { "1" } else { "0" }).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

#[test]
fn a_callsite_registers_at_its_first_record_and_writes_only_while_traced() {
    let p = unique("ftrace");
    let event = format!("{p}_tick");
    let dir = tracefs().join("events/user_events").join(&event);
    let subscriber = tracing_subscriber::registry().with(usertrace_tracing::layer_for(usertrace::Provider::new(&p).unwrap()));
    tracing::subscriber::with_default(subscriber, || {
        let tick = |n: u64| tracing::info!(name: "tick", n, "tick");
        assert!(!dir.exists(), "nothing is registered before the first record");
        tick(1);
        let format = std::fs::read_to_string(dir.join("format")).expect("registered by the first record");
        for declared in ["field:__rel_loc char level", "field:__rel_loc char message", "field:u64 n;"] {
            assert!(format.contains(declared), "{declared} in {format}");
        }
        std::fs::write(tracefs().join("trace"), "").unwrap();
        tick(2);
        set_ftrace(&event, true);
        tick(3);
        tick(4);
        set_ftrace(&event, false);
        tick(5);
        // Read while the layer (and so the event) lives: ftrace formats a
        // line by its event's format, which goes with the event.
        let text = std::fs::read_to_string(tracefs().join("trace")).unwrap();
        assert_eq!(traced_n(&event), [3, 4], "written only while ftrace listened: {text}");
    });
    // Dropping the layer unregistered its tracepoint, and the kernel
    // deletes an event nobody registers any more (soon, not at once).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while dir.exists() {
        assert!(std::time::Instant::now() < deadline, "{event} is still registered after the layer went");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

//! A separate program for the kernel tests that need a fresh process image.
//!
//! - `tp_child emit NAME VALUE`: registers `NAME` (one u32 field `x`), emits
//!   `x=VALUE` if a tracer is attached, prints `enabled=true|false`.
//! - `tp_child churn N`: registers N tracepoints, unregisters them all, and
//!   waits until `user_events_status` lists none of them; prints
//!   `registered=R after=A` (how many of its own events were listed), while
//!   this process is still alive.

use std::time::{Duration, Instant};

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

/// How many events named `prefix*` `user_events_status` lists.
///
/// Only this process's own names are counted: other tests' events may still
/// be on the kernel's deletion work queue, so a count of everything moves
/// under us. `None` when the listing is not text: 6.12 prints the table under
/// the group's registration mutex while the deletion work unhashes and frees
/// events under another lock, so a read that races the deletion can show a
/// freed event's name as garbage. The caller reads again.
fn listed_with_prefix(prefix: &str) -> Option<usize> {
    let tracefs = usertrace::status().tracefs.expect("tracefs");
    let bytes = std::fs::read(tracefs.join("user_events_status")).expect("read user_events_status");
    let text = String::from_utf8(bytes).ok()?;
    Some(text.lines().take_while(|l| !l.is_empty()).filter(|l| l.starts_with(prefix)).count())
}

/// [`listed_with_prefix`] read every 50 ms until `done` holds for a
/// readable count, or 120 s pass; the last count read.
fn listed_until(prefix: &str, done: impl Fn(usize) -> bool) -> Option<usize> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut count = listed_with_prefix(prefix);
    while !count.is_some_and(&done) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        count = listed_with_prefix(prefix);
    }
    count
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["emit", name, value] => {
            let tp = DynamicTracepoint::new(*name, vec![Field::new("x", FieldType::U32)], RegisterOptions::default())
                .unwrap();
            tp.register().unwrap();
            println!("enabled={}", tp.enabled());
            tp.emit(&[Value::U32(value.parse().unwrap())]).unwrap();
        }
        ["churn", n] => {
            let n: usize = n.parse().unwrap();
            let prefix = format!("ut_churn_{}_", std::process::id());
            let tps: Vec<DynamicTracepoint> = (0..n)
                .map(|i| {
                    let name = format!("{prefix}{i}");
                    let tp = DynamicTracepoint::new(name, vec![Field::new("i", FieldType::U32)], RegisterOptions::default())
                        .unwrap();
                    tp.register().unwrap();
                    tp
                })
                .collect();
            // Earlier tests' events may still be being deleted, so even this
            // listing can race a deletion: read until it is text.
            let registered = listed_until(&prefix, |_| true);
            drop(tps);
            // The kernel deletes unreferenced events from a work queue.
            let after = listed_until(&prefix, |count| count == 0);
            let shown = |c: Option<usize>| c.map_or_else(|| "unreadable".to_owned(), |c| c.to_string());
            println!("registered={} after={}", shown(registered), shown(after));
        }
        _ => {
            eprintln!("usage: tp_child emit NAME VALUE | tp_child churn N");
            std::process::exit(2);
        }
    }
}

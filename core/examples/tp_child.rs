//! A separate program for the kernel tests that need a fresh process image.
//!
//! - `tp_child emit NAME VALUE`: registers `NAME` (one u32 field `x`), emits
//!   `x=VALUE` if a tracer is attached, prints `enabled=true|false`.
//! - `tp_child churn N`: registers N tracepoints, unregisters them all, and
//!   waits until `user_events_status` lists as many events as before; prints
//!   `baseline=B registered=R after=A`, while this process is still alive.

use std::time::{Duration, Instant};

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

fn status_event_count() -> usize {
    let tracefs = usertrace::status().tracefs.expect("tracefs");
    let text = std::fs::read_to_string(tracefs.join("user_events_status")).unwrap();
    text.lines().take_while(|l| !l.is_empty()).count()
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
            let baseline = status_event_count();
            let tps: Vec<DynamicTracepoint> = (0..n)
                .map(|i| {
                    let name = format!("ut_churn_{}_{i}", std::process::id());
                    let tp = DynamicTracepoint::new(name, vec![Field::new("i", FieldType::U32)], RegisterOptions::default())
                        .unwrap();
                    tp.register().unwrap();
                    tp
                })
                .collect();
            let registered = status_event_count();
            drop(tps);
            // The kernel deletes unreferenced events from a work queue.
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut after = status_event_count();
            while after != baseline && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
                after = status_event_count();
            }
            println!("baseline={baseline} registered={registered} after={after}");
        }
        _ => {
            eprintln!("usage: tp_child emit NAME VALUE | tp_child churn N");
            std::process::exit(2);
        }
    }
}

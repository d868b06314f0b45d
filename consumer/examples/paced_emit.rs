//! A producer at a set rate, for finding the highest rate a recorder keeps
//! up with (`harness/bench-consumer.sh`).
//!
//!   paced_emit NAME RATE COUNT [GO_FILE]
//!
//! Registers `NAME u64 n` (the event of `ut_emit seq`, so records are the
//! same size), prints `ready PID`, waits for a tracer (then prints
//! `enabled`), and, once GO_FILE exists if one is named, emits n = 0..COUNT
//! at RATE events per second (0: as fast as it can). It paces by the clock,
//! in batches every millisecond: after a late wake-up it catches up, so the
//! average rate holds even where sleeps overshoot (as under qemu). Prints
//! `emitted N in T s = R/s, F failed`.

use std::io::Write;
use std::time::{Duration, Instant};

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = || -> ! {
        eprintln!("usage: paced_emit NAME RATE COUNT [GO_FILE]");
        std::process::exit(2);
    };
    let (Some(name), Some(rate), Some(count)) = (args.get(1), args.get(2).and_then(|r| r.parse::<u64>().ok()), args.get(3).and_then(|c| c.parse::<u64>().ok()))
    else {
        usage()
    };
    let go = args.get(4).map(std::path::PathBuf::from);

    let tp = DynamicTracepoint::new(name.as_str(), vec![Field::new("n", FieldType::U64)], RegisterOptions::default()).expect("valid definition");
    tp.register().expect("register");
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready {}", std::process::id()).and_then(|()| out.flush());
    let waited = Instant::now();
    while !tp.enabled() {
        if waited.elapsed() > Duration::from_secs(60) {
            eprintln!("paced_emit: nobody attached to {name}");
            std::process::exit(3);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = writeln!(out, "enabled").and_then(|()| out.flush());
    if let Some(go) = &go {
        while !go.exists() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    let tick = Duration::from_millis(1);
    let start = Instant::now();
    let (mut n, mut failed) = (0u64, 0u64);
    while n < count {
        let due = if rate == 0 { count } else { count.min((start.elapsed().as_secs_f64() * rate as f64) as u64 + 1) };
        while n < due {
            // A failure (EBADF: nobody attached any more) is counted, not
            // fatal: the rate is what is measured here.
            if tp.emit(&[Value::U64(n)]).is_err() {
                failed += 1;
            }
            n += 1;
        }
        if n < count {
            // Sleep to the next millisecond of the schedule.
            let next = start + tick * (start.elapsed().as_millis() as u32 + 1);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!("emitted {n} in {seconds:.3} s = {:.0}/s, {failed} failed", n as f64 / seconds);
}

//! A producer for this crate's kernel tests: a program that uses `tracing`
//! (or `log`) with the usertrace layer, as an application would.
//!
//!   ut_tracing_emit events PROVIDER    three events: typed fields, a named one, text of every kind
//!   ut_tracing_emit spans PROVIDER     a span with a field recorded later, holding a nested span
//!                                      and an event; then a span ended on another thread
//!   ut_tracing_emit log PROVIDER       three `log` records, one too long for perf
//!   ut_tracing_emit mismatch PROVIDER  one callsite recording u64, text, a negative i64, u64
//!
//! PROVIDER `-` uses the default provider (the program's name). It prints
//! `line N` for each unnamed event's line, in order (its name ends in it),
//! and for `spans`, `tid T` of the thread that ended the last span.

use tracing_subscriber::prelude::*;

/// Runs `$record` and returns its line, which `tracing` names it by: both
/// are the line of this macro's invocation, however it is formatted.
macro_rules! line_of {
    ($record:expr) => {{
        $record;
        line!()
    }};
}

fn provider(arg: &str) -> Option<usertrace::Provider> {
    (arg != "-").then(|| usertrace::Provider::new(arg).expect("a valid provider name"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, provider) = match args.as_slice() {
        [_, mode, provider_arg] => (mode.as_str(), provider(provider_arg)),
        _ => {
            eprintln!("usage: ut_tracing_emit events|spans|log|mismatch PROVIDER");
            std::process::exit(2);
        }
    };
    if mode == "log" {
        let provider = provider.unwrap_or_else(|| usertrace::Provider::new(usertrace_tracing::default_provider()).unwrap());
        usertrace_tracing::log::init_with(usertrace_tracing::log::Logger::new(&provider), log::LevelFilter::Trace).unwrap();
        log::info!(target: "ut_target", "hello {}", 42);
        log::error!("boom");
        log::debug!("{}", "x".repeat(10_000));
        return;
    }
    match provider {
        Some(p) => tracing_subscriber::registry().with(usertrace_tracing::layer_for(p)).init(),
        None => tracing_subscriber::registry().with(usertrace_tracing::layer()).init(),
    }
    let mut lines = Vec::new();
    match mode {
        "events" => {
            lines.push(line_of!(tracing::info!(answer = 42u64, name = "x", "hello")));
            tracing::warn!(name: "second", delta = -7i64, ratio = 0.25f64, ok = true, "second {}", 2);
            lines.push(line_of!(tracing::error!(
                target: "ut::custom",
                list = ?[1, 2],
                shown = %"disp",
                big = u128::MAX,
                http.method = "GET",
                bytes = &b"\xde\xad"[..],
                nul = "a\0b"
            )));
        }
        "spans" => {
            let outer = tracing::info_span!("request", path = "/a", status = tracing::field::Empty);
            {
                let _entered = outer.enter();
                {
                    let _inner = tracing::debug_span!("inner", depth = 3i64).entered();
                }
                outer.record("status", 200u64);
                lines.push(line_of!(tracing::info!("inside")));
            }
            drop(outer);
            let moved = tracing::info_span!("moved", n = 1u64);
            let tid = std::thread::spawn(move || {
                drop(moved);
                // SAFETY: gettid has no preconditions.
                unsafe { libc::syscall(libc::SYS_gettid) }
            })
            .join()
            .unwrap();
            println!("tid {tid}");
        }
        "mismatch" => {
            let values: [&dyn tracing::Value; 4] = [&5u64, &"five", &-1i64, &6u64];
            for v in values {
                let line = line_of!(tracing::info!(v = v, "m"));
                if lines.is_empty() {
                    lines.push(line);
                }
            }
        }
        other => {
            eprintln!("ut_tracing_emit: unknown mode {other}");
            std::process::exit(2);
        }
    }
    for line in lines {
        println!("line {line}");
    }
}

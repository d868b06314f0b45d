//! Producer benchmarks, each printed beside its baseline from the same run.
//! Needs user_events: `harness/bench` runs it in the guest kernel.
//!
//! 1. `enabled()` on a disabled tracepoint vs a plain relaxed-load loop.
//! 2. An enabled 4-byte emit with a perf event attached vs a hand-written
//!    `writev` of the same event to user_events_data.
//! 3. Registering and unregistering 10,000 tracepoints vs raw ioctl loops.
//! 4. A disabled span's begin and end vs two disabled checks.
//! 5. An enabled span (begin + end, perf attached) vs one 4-byte emit, and
//!    the same two events written by hand, the kernel's share of it.
//!
//! `cargo bench --bench producer -- enabled_span` runs one of them.

use std::ffi::CString;
use std::hint::black_box;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use usertrace::__private::abi::{UserReg, UserUnreg, DIAG_IOCSREG, DIAG_IOCSUNREG};
use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions};

#[path = "support/kernel.rs"]
mod kernel;

use kernel::{PerfAttached, RawEvent};

mod events {
    usertrace::tracepoints! {
        provider bench;
        pub fn disabled(x: u32);
        pub fn enabled(x: u32);
        pub span disabled_span(x: u32);
        pub span enabled_span(x: u32);
    }
}

fn ns_per(iterations: u64, elapsed: Duration) -> f64 {
    elapsed.as_nanos() as f64 / iterations as f64
}

fn row(name: &str, ns: f64, baseline_name: &str, baseline_ns: f64) {
    println!("{name:<44} {ns:>10.2} ns   {baseline_name:<36} {baseline_ns:>10.2} ns   ratio {:>6.2}", ns / baseline_ns);
}

/// Best of `rounds` timings of `f`, which runs `iterations` times.
fn best(rounds: usize, iterations: u64, mut f: impl FnMut(u64)) -> f64 {
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f(iterations);
            ns_per(iterations, start.elapsed())
        })
        .fold(f64::INFINITY, f64::min)
}

fn disabled_check() {
    events::PROVIDER.register().expect("user_events must be available (see `usertrace status`)");
    assert!(!events::disabled::enabled());
    let plain = AtomicU32::new(0);
    const N: u64 = 20_000_000;
    let ours = best(5, N, |n| {
        let mut hits = 0u64;
        for _ in 0..n {
            if black_box(&events::disabled::TRACEPOINT).enabled() {
                hits += 1;
            }
        }
        black_box(hits);
    });
    let baseline = best(5, N, |n| {
        let mut hits = 0u64;
        for _ in 0..n {
            if black_box(&plain).load(Ordering::Relaxed) != 0 {
                hits += 1;
            }
        }
        black_box(hits);
    });
    row("disabled check: tracepoint.enabled()", ours, "plain relaxed AtomicU32 load", baseline);
}

fn enabled_emit() {
    let perf = PerfAttached::open(events::enabled::NAME);
    assert!(events::enabled::enabled());

    // The baseline: the same event written by hand, with our own descriptor
    // and registration, as a C programmer would without usertrace.
    let raw = RawEvent::register(&format!("{} u32 x", events::enabled::NAME));
    const N: u64 = 20_000;
    let ours = |n: u64| {
        for i in 0..n {
            usertrace::emit!(events::enabled(i as u32)).unwrap();
            if i % 256 == 0 {
                perf.drain();
            }
        }
    };
    let baseline = |n: u64| {
        for i in 0..n {
            if raw.enabled() {
                raw.write(&(i as u32).to_ne_bytes());
            }
            if i % 256 == 0 {
                perf.drain();
            }
        }
    };
    // Alternate the two, so a noisy neighbour hurts both alike.
    let (mut ours_ns, mut baseline_ns) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..9 {
        baseline_ns = baseline_ns.min(best(1, N, baseline));
        ours_ns = ours_ns.min(best(1, N, ours));
    }
    let (ours, baseline) = (ours_ns, baseline_ns);
    row("enabled 4-byte emit (perf attached)", ours, "hand-written raw writev", baseline);
}

fn disabled_span() {
    events::PROVIDER.register().unwrap();
    assert!(!events::disabled_span::enabled() && !events::SPAN_END.enabled());
    const N: u64 = 20_000_000;
    let ours = best(5, N, |n| {
        for i in 0..n {
            let span = usertrace::span!(events::disabled_span(i as u32));
            black_box(&span);
        }
    });
    let baseline = best(5, N, |n| {
        let mut hits = 0u64;
        for _ in 0..n {
            if black_box(&events::disabled::TRACEPOINT).enabled() {
                hits += 1;
            }
            if black_box(&events::SPAN_END).enabled() {
                hits += 1;
            }
        }
        black_box(hits);
    });
    row("disabled span: begin + end", ours, "two disabled enabled() checks", baseline);
}

fn enabled_span() {
    let begin = PerfAttached::open(events::enabled_span::NAME);
    let end = PerfAttached::open(events::SPAN_END.name());
    let one = PerfAttached::open(events::enabled::NAME);
    assert!(events::enabled_span::enabled() && events::SPAN_END.enabled() && events::enabled::enabled());
    // The kernel's share: the same two events (same names, so the same
    // tracepoints and perf events), written by hand.
    let raw_begin = RawEvent::register(&format!("{} u64 span_begin;u32 x", events::enabled_span::NAME));
    let raw_end = RawEvent::register(&format!("{} u64 span_end", events::SPAN_END.name()));
    const N: u64 = 20_000;
    let ours = |n: u64| {
        for i in 0..n {
            drop(usertrace::span!(events::enabled_span(i as u32)).unwrap());
            if i % 128 == 0 {
                begin.drain();
                end.drain();
            }
        }
    };
    let raw_pair = |n: u64| {
        for i in 0..n {
            if raw_begin.enabled() {
                let mut payload = [0u8; 12];
                payload[..8].copy_from_slice(&(i + 1).to_ne_bytes());
                payload[8..].copy_from_slice(&(i as u32).to_ne_bytes());
                raw_begin.write(&payload);
                if raw_end.enabled() {
                    raw_end.write(&(i + 1).to_ne_bytes());
                }
            }
            if i % 128 == 0 {
                begin.drain();
                end.drain();
            }
        }
    };
    let baseline = |n: u64| {
        for i in 0..n {
            usertrace::emit!(events::enabled(i as u32)).unwrap();
            if i % 256 == 0 {
                one.drain();
            }
        }
    };
    let (mut ours_ns, mut raw_ns, mut baseline_ns) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..9 {
        baseline_ns = baseline_ns.min(best(1, N, baseline));
        ours_ns = ours_ns.min(best(1, N, ours));
        raw_ns = raw_ns.min(best(1, N, raw_pair));
    }
    row("enabled span: begin + end (perf attached)", ours_ns, "one enabled 4-byte emit", baseline_ns);
    row("two raw writevs, the span's two layouts", raw_ns, "one enabled 4-byte emit", baseline_ns);
    row("enabled span: begin + end (perf attached)", ours_ns, "the same two events as raw writevs", raw_ns);
}

/// 10,000 registrations and unregistrations through usertrace, beside the
/// same names and fields registered with a bare `DIAG_IOCSREG` loop (and
/// unregistered with `DIAG_IOCSUNREG`) on a descriptor of its own: the
/// kernel's share of the cost.
fn register_unregister() {
    const N: usize = 10_000;
    let fields = vec![Field::new("x", FieldType::U32)];

    let ours = |names: &[String]| {
        let start = Instant::now();
        let tps: Vec<DynamicTracepoint> = names
            .iter()
            .map(|name| {
                let tp = DynamicTracepoint::new(name.clone(), fields.clone(), RegisterOptions::default()).unwrap();
                tp.register().unwrap();
                tp
            })
            .collect();
        let registered = start.elapsed();
        let start = Instant::now();
        drop(tps);
        (registered, start.elapsed())
    };

    let tracefs = usertrace::status().tracefs.unwrap();
    let path = CString::new(tracefs.join("user_events_data").to_str().unwrap()).unwrap();
    let raw = |names: &[String]| {
        // SAFETY: open(2) on a NUL-terminated path.
        let fd = unsafe { OwnedFd::from_raw_fd(libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC)) };
        // The enable words stay put (one allocation) until unregistered.
        let words: Vec<AtomicU32> = (0..names.len()).map(|_| AtomicU32::new(0)).collect();
        let formats: Vec<CString> = names.iter().map(|n| CString::new(format!("{n} u32 x")).unwrap()).collect();
        let start = Instant::now();
        for (word, format) in words.iter().zip(&formats) {
            let mut reg = UserReg {
                size: std::mem::size_of::<UserReg>() as u32,
                enable_bit: 0,
                enable_size: 4,
                flags: 0,
                enable_addr: word.as_ptr() as u64,
                name_args: format.as_ptr() as u64,
                write_index: 0,
            };
            // SAFETY: a valid user_reg whose enable word outlives the registration.
            assert_eq!(unsafe { libc::ioctl(fd.as_raw_fd(), DIAG_IOCSREG as _, &mut reg) }, 0);
        }
        let registered = start.elapsed();
        let start = Instant::now();
        for word in &words {
            let unreg = UserUnreg {
                size: std::mem::size_of::<UserUnreg>() as u32,
                disable_bit: 0,
                reserved: 0,
                reserved2: 0,
                disable_addr: word.as_ptr() as u64,
            };
            // SAFETY: a valid user_unreg naming a word registered above.
            assert_eq!(unsafe { libc::ioctl(fd.as_raw_fd(), DIAG_IOCSUNREG as _, &unreg) }, 0);
        }
        drop(fd);
        (registered, start.elapsed())
    };

    // Fresh names for every run, of the same length and fields for both:
    // an event outlives its last unregistration for a while (the kernel
    // frees it after an RCU grace period), and finding an existing event
    // is cheaper than creating one, so reusing names would favour one side.
    let names_for = |side: char, run: usize| -> Vec<String> { (0..N).map(|i| format!("bench_{side}{run}_{i:05}")).collect() };
    // The kernel deletes the events of a closed descriptor in the
    // background; a run that overlapped that work of the run before would
    // pay for it. So each run starts once the last one's events are gone.
    let events_dir = tracefs.join("events/user_events");
    let wait_until_deleted = |names: &[String]| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while names.iter().step_by(997).any(|n| events_dir.join(n).exists()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    // Alternate, so that a noisy neighbour hurts both alike.
    let (mut best_ours, mut best_raw) = ((Duration::MAX, Duration::MAX), (Duration::MAX, Duration::MAX));
    for run in 0..3 {
        let names = names_for('r', run);
        let r = raw(&names);
        wait_until_deleted(&names);
        best_raw = (best_raw.0.min(r.0), best_raw.1.min(r.1));
        let names = names_for('o', run);
        let o = ours(&names);
        wait_until_deleted(&names);
        best_ours = (best_ours.0.min(o.0), best_ours.1.min(o.1));
    }
    let us = |d: Duration| d.as_secs_f64() * 1e9 / N as f64;
    row(&format!("register {N} tracepoints (per tracepoint)"), us(best_ours.0), "raw DIAG_IOCSREG loop", us(best_raw.0));
    row(&format!("unregister {N} tracepoints (per tracepoint)"), us(best_ours.1), "raw DIAG_IOCSUNREG loop", us(best_raw.1));
}

fn main() {
    println!("usertrace producer benchmarks (kernel {})", std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim());
    // `cargo bench` passes --bench; other arguments name the benchmarks to
    // run (all of them when none is named).
    let wanted: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let benches: [(&str, fn()); 5] = [
        ("disabled_check", disabled_check),
        ("enabled_emit", enabled_emit),
        ("disabled_span", disabled_span),
        ("enabled_span", enabled_span),
        ("register_unregister", register_unregister),
    ];
    events::PROVIDER.register().expect("user_events must be available (see `usertrace status`)");
    for (name, bench) in benches {
        if wanted.is_empty() || wanted.iter().any(|w| w == name) {
            bench();
        }
    }
}

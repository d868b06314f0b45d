//! An enabled 4-byte emit through the shared-memory transport beside two
//! baselines from the same run: the `writev` of the same event to
//! /dev/null (the system call every user_events emit makes, without the
//! kernel's trace-buffer work), and, where the kernel has user_events (the
//! guest: `harness/bench` runs this there too), the same event written to
//! user_events with a perf event attached, which is what the shared-memory
//! transport replaces. `cargo bench -p usertrace --bench shm_emit`.
//!
//! The recorder is played by the bench: it sets the enable word, as
//! `usertrace record` would with `process_vm_writev`, and after each round
//! it takes what the round wrote by moving the ring's tail to its head, as
//! a recorder does once it copied the records out (outside the timing, as
//! the perf ring of the user_events row is drained). The ring (1 MiB)
//! holds a round's records, so each emit is a real write, never the
//! full-ring drop, into pages that earlier rounds touched, as a producer
//! whose recorder keeps up writes: a ring that never wrapped would time
//! page faults, not emits. Rounds are short and many, the rows take turns
//! within each, and the best round of each is printed.

use std::fs::OpenOptions;
use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use usertrace::__private::payload::write_event;
use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

#[path = "support/kernel.rs"]
#[allow(dead_code)]
mod kernel;
#[path = "support/shm_ring.rs"]
#[allow(dead_code)]
mod shm_ring;
use shm_ring::ThisThreadsRing;

const ROUNDS: usize = 100;
const CALLS: u32 = 10_000;

fn main() {
    // SAFETY: set before any other thread exists, and before the first
    // registration reads them.
    unsafe {
        std::env::set_var("USERTRACE_TRANSPORT", "shm");
        std::env::set_var("USERTRACE_SHM_RING_KIB", "1024");
    }
    let fields = vec![Field::new("x", FieldType::U32)];
    let tp = DynamicTracepoint::new("bench_shm_emit", fields.clone(), RegisterOptions::default()).expect("a valid event");
    tp.register().expect("registration through shared memory");
    // SAFETY: the registered tracepoint's word, alive while `tp` is, and
    // only accessed atomically.
    unsafe { AtomicU32::from_ptr(tp.tracepoint().enable_word().cast_mut()) }.store(1, Ordering::Relaxed);
    tp.emit(&[Value::U32(0)]).expect("the first emit makes this thread's ring");
    let ring = ThisThreadsRing::open();
    let null = OpenOptions::new().write(true).open("/dev/null").expect("/dev/null");
    // The event through user_events, made by hand (this process's own
    // tracepoints take shared memory), with perf attached to it.
    let user_events = usertrace::status().is_available().then(|| {
        let raw = kernel::RawEvent::register("bench_shm_emit_ue u32 x");
        let perf = kernel::PerfAttached::open("bench_shm_emit_ue");
        assert!(raw.enabled(), "perf attached to bench_shm_emit_ue");
        (raw, perf)
    });
    let (mut shm, mut writev, mut kernel_emit, mut clock) = (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..ROUNDS {
        // The clock read each record carries, alone: a vDSO call natively,
        // but a system call where the kernel's clock source has no vDSO
        // (a guest under emulation, often).
        let start = Instant::now();
        for _ in 0..CALLS {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: `ts` is a valid, writable timespec.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, black_box(&mut ts)) };
        }
        clock = clock.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        if let Some((raw, perf)) = &user_events {
            let start = Instant::now();
            for i in 0..CALLS {
                if raw.enabled() {
                    raw.write(&black_box(i).to_ne_bytes());
                }
                if i % 256 == 0 {
                    perf.drain();
                }
            }
            kernel_emit = kernel_emit.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        }
        ring.take_all();
        let start = Instant::now();
        for i in 0..CALLS {
            tp.emit(&[Value::U32(black_box(i))]).expect("emit");
        }
        shm = shm.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        let start = Instant::now();
        for i in 0..CALLS {
            write_event(null.as_raw_fd(), 0, "bench_shm_emit", &fields, &[Value::U32(black_box(i))]).expect("writev");
        }
        writev = writev.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
    }
    assert_eq!(ring.lost(), 0, "every emit timed was written, none dropped for a full ring");
    println!(
        "{:<52} {shm:>8.1} ns   {:<40} {writev:>8.1} ns   ratio {:.3}",
        "enabled 4-byte emit through shared memory",
        "the same event's writev to /dev/null",
        shm / writev
    );
    println!(
        "{:<52} {clock:>8.1} ns   (clock source: {})",
        "of which: clock_gettime(CLOCK_MONOTONIC) alone",
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource").unwrap_or_default().trim()
    );
    if user_events.is_some() {
        println!(
            "{:<52} {shm:>8.1} ns   {:<40} {kernel_emit:>8.1} ns   ratio {:.3}",
            "enabled 4-byte emit through shared memory",
            "the same event's writev to user_events (perf attached)",
            shm / kernel_emit
        );
    } else {
        println!("(no user_events here: the row against a user_events emit is measured in the guest, by harness/bench)");
    }
}

//! An enabled 4-byte emit through the shared-memory transport, natively
//! (this host's kernel lacks user_events, which is where the transport
//! serves), beside the `writev` of the same event to /dev/null from the
//! same run: the system call every user_events emit makes, without the
//! kernel's trace-buffer work (that one, measured in the guest, is the
//! `producer` bench's "enabled 4-byte emit" row). `cargo bench -p usertrace
//! --bench shm_emit`.
//!
//! The recorder is played by the bench: it sets the enable word, as
//! `usertrace record` would with `process_vm_writev`. The ring is made
//! large enough (64 MiB) to hold every record of a round, so each emit is
//! a real write, never the full-ring drop. Rounds are short and many, the
//! rows take turns within each, and the best round of each is printed.

use std::fs::OpenOptions;
use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use usertrace::__private::payload::write_event;
use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

const ROUNDS: usize = 100;
const CALLS: u32 = 10_000;

fn main() {
    // SAFETY: set before any other thread exists, and before the first
    // registration reads them.
    unsafe {
        std::env::set_var("USERTRACE_TRANSPORT", "shm");
        std::env::set_var("USERTRACE_SHM_RING_KIB", "65536");
    }
    let fields = vec![Field::new("x", FieldType::U32)];
    let tp = DynamicTracepoint::new("bench_shm_emit", fields.clone(), RegisterOptions::default()).expect("a valid event");
    tp.register().expect("registration through shared memory");
    // SAFETY: the registered tracepoint's word, alive while `tp` is, and
    // only accessed atomically.
    unsafe { AtomicU32::from_ptr(tp.tracepoint().enable_word().cast_mut()) }.store(1, Ordering::Relaxed);
    let null = OpenOptions::new().write(true).open("/dev/null").expect("/dev/null");
    let (mut shm, mut writev) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..ROUNDS {
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
    println!(
        "{:<52} {shm:>8.1} ns   {:<40} {writev:>8.1} ns   ratio {:.3}",
        "enabled 4-byte emit through shared memory",
        "the same event's writev to /dev/null",
        shm / writev
    );
}

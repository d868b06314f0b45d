//! Whether emits on different cores slow each other down: the part of the
//! enabled path that runs before the `writev`, from 1 thread and from 2
//! threads on 2 cores, each figure per event on one thread. Needs no
//! kernel: `cargo bench -p usertrace --bench emit_scaling`.
//!
//! 1. The control: `EmitScope` enter and drop as it was before issue 12,
//!    two SeqCst read-modify-writes of one process-wide counter pair,
//!    copied below. Two threads write the same cache line and bounce it.
//! 2. `EmitScope` enter and drop as it is, in each thread's own slot.
//! 3. `ExternalTracepoint::emit` of a 4-field event on a word set by hand,
//!    plus `validate` of the same values. Without a kernel the tracepoint
//!    is not registered, so `emit` runs the enabled path up to the
//!    registration check (the word's load, the scope, the state's load) and
//!    returns; `validate` runs the checks the payload layout makes before
//!    the `writev`. What it leaves out (a load of the descriptor, and the
//!    iovecs it builds on the stack) writes nothing another thread touches.
//!
//! Other jobs share the 2 cores, so a round is short (a few milliseconds,
//! about one time slice) and there are many: some run with both threads on
//! their cores throughout, and the best round is one of those. Its figure
//! is its slower thread's, by the wall clock. (A thread's CPU clock would
//! not count the time another job held its core, but it would not see a
//! round where the two threads took turns rather than overlapped either:
//! that hides the bounce.) Configurations take turns within each round, so
//! a burst of load hits them alike.

use std::hint::black_box;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::sync::Barrier;
use std::time::Instant;

use usertrace::{Definition, EmitScope, ExternalTracepoint, Field, FieldType, RegisterOptions, Value};

/// `core/src/producer/in_flight.rs` before issue 12 (its enter and drop,
/// unchanged): the control.
mod shared_pair {
    use std::sync::atomic::{AtomicUsize, Ordering};

    static EPOCH: AtomicUsize = AtomicUsize::new(0);
    static EMITS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

    #[must_use]
    pub struct EmitScope(usize);

    impl EmitScope {
        #[inline]
        pub fn enter() -> EmitScope {
            let epoch = EPOCH.load(Ordering::SeqCst) & 1;
            EMITS[epoch].fetch_add(1, Ordering::SeqCst);
            EmitScope(epoch)
        }
    }

    impl Drop for EmitScope {
        #[inline]
        fn drop(&mut self) {
            EMITS[self.0].fetch_sub(1, Ordering::Release);
        }
    }
}

const ROUNDS: usize = 60;
/// About 2.5 ms per round from one thread.
const ITERATIONS: u64 = 500_000;

/// Keeps the calling thread on `cpu`, so two threads run on two cores.
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below the number of CPUs, well inside the set.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is this thread; `set` is a valid cpu_set_t of that size.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    assert_eq!(rc, 0, "sched_setaffinity: {}", std::io::Error::last_os_error());
}

/// Nanoseconds per call of `f` on each of `threads` threads running it
/// `iterations` times at once; the slowest thread's figure.
fn per_event(threads: usize, cpus: usize, iterations: u64, f: &(dyn Fn() + Sync)) -> f64 {
    let start = Barrier::new(threads);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|i| {
                let start = &start;
                s.spawn(move || {
                    pin_to(i % cpus);
                    // The thread's first emit claims its slot: not timed.
                    f();
                    start.wait();
                    let begin = Instant::now();
                    for _ in 0..iterations {
                        f();
                    }
                    begin.elapsed().as_nanos() as f64 / iterations as f64
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).fold(0.0, f64::max)
    })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "?".into(), |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

fn main() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("emit_scaling: only {cpus} CPU: two threads would share it; the 2-thread rows say nothing");
    }

    let word = AtomicU32::new(1);
    let definition = Definition::new(
        "bench_scaling",
        vec![
            Field::new("id", FieldType::U64),
            Field::new("path", FieldType::Str),
            Field::new("status", FieldType::U16),
            Field::new("latency", FieldType::F64),
        ],
    )
    .unwrap();
    // SAFETY: `word` outlives the tracepoint (declared before it, so dropped
    // after), and is never registered: the kernel never writes it.
    let tracepoint = unsafe { ExternalTracepoint::new(NonNull::from(&word), definition, RegisterOptions::default()) };
    assert!(tracepoint.enabled() && !tracepoint.is_registered());
    let values = [Value::U64(42), Value::Str("/index.html"), Value::U16(200), Value::F64(1.25)];

    let control = || drop(black_box(shared_pair::EmitScope::enter()));
    let slots = || drop(black_box(EmitScope::enter()));
    let emit_path = || {
        tracepoint.emit(black_box(&values)).unwrap();
        tracepoint.validate(black_box(&values)).unwrap();
    };
    // Each with its calls per thread per round.
    let configs: [(&str, u64, &(dyn Fn() + Sync)); 3] = [
        ("scope enter + drop, shared pair (control)", ITERATIONS, &control),
        ("scope enter + drop, per-thread slots", ITERATIONS, &slots),
        ("emit up to the registration check + validate", ITERATIONS / 5, &emit_path),
    ];

    let load_before = load_average();
    // best[config][threads - 1]
    let mut best = [[f64::INFINITY; 2]; 3];
    for _ in 0..ROUNDS {
        for (c, (_, iterations, f)) in configs.iter().enumerate() {
            for threads in [1, 2] {
                best[c][threads - 1] = best[c][threads - 1].min(per_event(threads, cpus, *iterations, *f));
            }
        }
    }
    println!("emit_scaling: best of {ROUNDS} rounds of about 2.5 ms per thread; {cpus} CPUs");
    println!("load average before {load_before}, after {}", load_average());
    println!("{:<46} {:>10} {:>10} {:>7}", "per event, on each thread", "1 thread", "2 threads", "ratio");
    for ((name, _, _), [one, two]) in configs.iter().zip(best) {
        println!("{name:<46} {one:>7.2} ns {two:>7.2} ns {:>7.2}", two / one);
    }
    println!(
        "per-thread slots against the control: {:.2} from 1 thread, {:.2} from 2 threads",
        best[1][0] / best[0][0],
        best[1][1] / best[0][1]
    );
}

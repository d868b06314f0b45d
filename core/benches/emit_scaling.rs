//! Whether emits on different cores slow each other down: the part of the
//! enabled path that runs before the `writev`, from 1 thread and from 2
//! threads on 2 cores, each figure per event on one thread. Needs no
//! kernel: `cargo bench -p usertrace --bench emit_scaling`.
//!
//! 1. The control: `EmitScope` enter and drop as it was before issue 12,
//!    two SeqCst read-modify-writes of one process-wide counter pair,
//!    copied below. Two threads write the same cache line and bounce it.
//! 2. What the hardware allows: the same two read-modify-writes (SeqCst
//!    add, Release sub) on a thread-local counter of each thread's own.
//!    Whatever two threads cost over one here (shared caches, clocks) no
//!    emit path can avoid.
//! 3. `EmitScope` enter and drop as it is, in each thread's own slot.
//! 4. `ExternalTracepoint::emit` of a 4-field event on a word set by hand,
//!    plus `validate` of the same values. Without a kernel the tracepoint
//!    is not registered, so `emit` runs the enabled path up to the
//!    registration check (the word's load, the scope, the state's load) and
//!    returns; `validate` runs the checks the payload layout makes before
//!    the `writev`. What it leaves out (a load of the descriptor, and the
//!    iovecs it builds on the stack) writes nothing another thread touches.
//! 5. Arithmetic on registers alone, about as long as 4: what two threads
//!    that share no memory at all get from this machine.
//!
//! Other jobs share the 2 cores, so a round is short (a few milliseconds,
//! about one time slice) and there are many; only clean rounds count: those
//! in which every thread ran on its core from the round's first call to its
//! last (its CPU time is at least 95% of the round's wall time). A round in
//! which the two threads took turns, or one waited for another job, would
//! hide the bounce or add the other job's time. A round's figure is its
//! wall time (first thread's start to last thread's end) per call on each
//! thread; the best clean round is reported. Configurations take turns
//! within each round, so a burst of load hits them alike.

use std::hint::black_box;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

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

/// A value alone on its 128-byte block, as the slots are.
#[repr(align(128))]
struct OwnLine<T>(T);

thread_local! {
    static OWN_COUNTER: OwnLine<AtomicUsize> = const { OwnLine(AtomicUsize::new(0)) };
}

const ROUNDS: usize = 100;
/// About 2.5 ms of enter and drop from one thread: rounds of at most that.
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

/// This thread's CPU time.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime: {}", std::io::Error::last_os_error());
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Nanoseconds per call of `f` on each of `threads` threads running it
/// `iterations` times at once, or None if the round was not clean (see the
/// module doc).
fn per_event(threads: usize, cpus: usize, iterations: u64, f: &(dyn Fn() + Sync)) -> Option<f64> {
    let start = Barrier::new(threads);
    let runs: Vec<(Instant, Instant, Duration)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|i| {
                let start = &start;
                s.spawn(move || {
                    pin_to(i % cpus);
                    // The thread's first emit claims its slot: not timed.
                    f();
                    start.wait();
                    let cpu = thread_cpu_time();
                    let begin = Instant::now();
                    for _ in 0..iterations {
                        f();
                    }
                    let end = Instant::now();
                    (begin, end, thread_cpu_time() - cpu)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let begin = runs.iter().map(|r| r.0).min().unwrap();
    let end = runs.iter().map(|r| r.1).max().unwrap();
    let wall = end - begin;
    let clean = runs.iter().all(|r| r.2.as_secs_f64() >= 0.95 * wall.as_secs_f64());
    clean.then(|| wall.as_nanos() as f64 / iterations as f64)
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

    let control = || drop(black_box(shared_pair::EmitScope::enter()));
    let own_counter = || {
        OWN_COUNTER.with(|counter| {
            black_box(&counter.0).fetch_add(1, Ordering::SeqCst);
            black_box(&counter.0).fetch_sub(1, Ordering::Release);
        })
    };
    let slots = || drop(black_box(EmitScope::enter()));
    let arithmetic = || {
        let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
        for _ in 0..24 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        black_box(x);
    };
    let emit_path = || {
        // On the emitting thread's stack, as an emit's arguments are.
        let values = [Value::U64(42), Value::Str("/index.html"), Value::U16(200), Value::F64(1.25)];
        tracepoint.emit(black_box(&values)).unwrap();
        tracepoint.validate(black_box(&values)).unwrap();
    };
    // Each with its calls per thread per round.
    let configs: [(&str, u64, &(dyn Fn() + Sync)); 5] = [
        // A quarter: from 2 threads each call takes several times as long.
        ("scope enter + drop, shared pair (control)", ITERATIONS / 4, &control),
        ("the same two atomic adds, thread-local counter", ITERATIONS, &own_counter),
        ("scope enter + drop, per-thread slots", ITERATIONS, &slots),
        ("emit up to the registration check + validate", ITERATIONS / 5, &emit_path),
        ("arithmetic alone, on registers", ITERATIONS / 5, &arithmetic),
    ];

    let load_before = load_average();
    // best[config][threads - 1], and how many rounds were clean
    let mut best = [[f64::INFINITY; 2]; 5];
    let mut clean = [[0usize; 2]; 5];
    for _ in 0..ROUNDS {
        for (c, (_, iterations, f)) in configs.iter().enumerate() {
            for threads in [1, 2] {
                if let Some(ns) = per_event(threads, cpus, *iterations, *f) {
                    best[c][threads - 1] = best[c][threads - 1].min(ns);
                    clean[c][threads - 1] += 1;
                }
            }
        }
    }
    println!("emit_scaling: best clean round of {ROUNDS}, each at most about 2.5 ms; {cpus} CPUs");
    println!("load average before {load_before}, after {}", load_average());
    println!("{:<46} {:>10} {:>10} {:>7}   clean rounds", "per event, on each thread", "1 thread", "2 threads", "ratio");
    for (((name, _, _), [one, two]), [clean1, clean2]) in configs.iter().zip(best).zip(clean) {
        println!("{name:<46} {one:>7.2} ns {two:>7.2} ns {:>7.2}   {clean1}, {clean2}", two / one);
    }
    println!(
        "per-thread slots against the control: {:.2} from 1 thread, {:.2} from 2 threads",
        best[2][0] / best[0][0],
        best[2][1] / best[0][1]
    );
}

//! What a shared-memory ring costs when it is made, and that no emit pays
//! for its pages afterwards. `cargo bench -p usertrace --bench shm_first_touch`.
//!
//! The ring size is read once per process (`USERTRACE_SHM_RING_KIB`), so
//! each measurement runs in a child process of this program, one per size,
//! the sizes taking turns over the rounds; medians over the rounds.
//!
//! - **Creation**, at 256 KiB, 1 MiB and 64 MiB: a thread's first enabled
//!   emit, which makes its ring (file, length, mapping, every page
//!   allocated and mapped). Beside it, from the same child: the same file
//!   made and mapped without its pages (what creation cost before), and
//!   a write to each of its pages (what the emits of the ring's first lap
//!   paid for them before, one fault at a time).
//! - **First lap against later laps**, 64 MiB: a fresh thread's emits in
//!   batches of 10,000, through the ring's first lap (every page new to
//!   this thread), then as many batches through its second lap. The
//!   recorder is played by the bench, which frees each batch by moving the
//!   ring's tail outside the timing, as in `shm_emit.rs`. Median ns per
//!   emit of each lap's batches, and their ratio.

use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

#[path = "support/shm_ring.rs"]
#[allow(dead_code)]
mod shm_ring;
use shm_ring::ThisThreadsRing;

const SIZES_KIB: [usize; 3] = [256, 1024, 65536];
const ROUNDS: usize = 7;
/// Rings made per child: the first is the process's first, which also
/// pays for the registry's sweep; the median of the rest is kept.
const RINGS_PER_CHILD: usize = 5;
const BATCH: u32 = 10_000;
const CHILD_ENV: &str = "SHM_FIRST_TOUCH_CHILD_KIB";

fn main() {
    if let Ok(kib) = std::env::var(CHILD_ENV) {
        child(kib.parse().expect("a size in KiB"));
        return;
    }
    let exe = std::env::current_exe().expect("this program");
    let mut by_size: Vec<Vec<[f64; 5]>> = vec![Vec::new(); SIZES_KIB.len()];
    for _ in 0..ROUNDS {
        for (i, kib) in SIZES_KIB.iter().enumerate() {
            let out = Command::new(&exe).env(CHILD_ENV, kib.to_string()).output().expect("the child runs");
            assert!(out.status.success(), "child for {kib} KiB: {}", String::from_utf8_lossy(&out.stderr));
            let line = String::from_utf8(out.stdout).unwrap();
            let v: Vec<f64> = line.split_whitespace().map(|f| f.parse().unwrap()).collect();
            by_size[i].push([v[0], v[1], v[2], v[3], v[4]]);
        }
    }
    println!("ring creation (a thread's first emit), median of {ROUNDS} rounds, sizes taking turns:");
    println!(
        "{:>10} {:>16} {:>26} {:>28} {:>8}",
        "ring", "first emit (µs)", "create+map, no pages (µs)", "a write per page after (µs)", "ratio"
    );
    for (i, kib) in SIZES_KIB.iter().enumerate() {
        let [create, bare, touch, _, _] = medians(&by_size[i]);
        println!("{:>7} KiB {create:>16.1} {bare:>26.1} {touch:>28.1} {:>8.2}", kib, create / (bare + touch));
    }
    let [_, _, _, first, later] = medians(&by_size[SIZES_KIB.len() - 1]);
    println!(
        "64 MiB ring, a fresh thread's emits: first lap {first:.1} ns, second lap {later:.1} ns, ratio {:.3} (median of {ROUNDS} rounds' medians of batches of {BATCH})",
        first / later
    );
}

fn medians(rows: &[[f64; 5]]) -> [f64; 5] {
    let mut out = [0.0; 5];
    for (k, o) in out.iter_mut().enumerate() {
        let mut column: Vec<f64> = rows.iter().map(|r| r[k]).collect();
        *o = median(&mut column);
    }
    out
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One size: prints `create_us bare_us touch_us first_lap_ns later_lap_ns`
/// (the laps only at 64 MiB; 0 elsewhere).
fn child(kib: usize) {
    // SAFETY: set before any other thread exists, and before the first
    // registration reads them.
    unsafe {
        std::env::set_var("USERTRACE_TRANSPORT", "shm");
        std::env::set_var("USERTRACE_SHM_RING_KIB", kib.to_string());
    }
    let fields = vec![Field::new("x", FieldType::U32)];
    let tp = DynamicTracepoint::new("bench_shm_first_touch", fields, RegisterOptions::default()).expect("a valid event");
    tp.register().expect("registration through shared memory");
    // SAFETY: the registered tracepoint's word, alive while `tp` is, and
    // only accessed atomically.
    unsafe { AtomicU32::from_ptr(tp.tracepoint().enable_word().cast_mut()) }.store(1, Ordering::Relaxed);
    let tp = &tp;
    // Each ring on a thread of its own: a thread's first emit makes it.
    let mut creations: Vec<f64> = (0..RINGS_PER_CHILD)
        .map(|_| {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let start = Instant::now();
                    tp.emit(&[Value::U32(0)]).expect("the first emit makes the ring");
                    start.elapsed().as_nanos() as f64 / 1e3
                })
                .join()
                .unwrap()
            })
        })
        .collect();
    let create = median(&mut creations[1..]);
    let (bare, touch) = bare_file(kib << 10);
    let (first, later) = if kib == 65536 {
        std::thread::scope(|s| s.spawn(|| laps(tp, kib << 10)).join().unwrap())
    } else {
        (0.0, 0.0)
    };
    println!("{create} {bare} {touch} {first} {later}");
}

/// The same file as a ring of `data_len`, made and mapped without
/// populating it, and then a write to each page: (µs, µs).
fn bare_file(data_len: usize) -> (f64, f64) {
    let len = 4096 + data_len;
    let path = format!("/dev/shm/usertrace-bench-bare-{}", std::process::id());
    let start = Instant::now();
    let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).expect("a file in /dev/shm");
    file.set_len(len as u64).unwrap();
    // SAFETY: a new shared mapping of the whole file, unmapped below.
    let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, file.as_raw_fd(), 0) };
    assert_ne!(base, libc::MAP_FAILED);
    let bare = start.elapsed().as_nanos() as f64 / 1e3;
    let start = Instant::now();
    for offset in (0..len).step_by(4096) {
        // SAFETY: inside the mapping, which only this function uses.
        unsafe { base.cast::<u8>().add(offset).write_volatile(1) };
    }
    let touch = start.elapsed().as_nanos() as f64 / 1e3;
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(base, len) };
    let _ = std::fs::remove_file(&path);
    (bare, touch)
}

/// On a fresh thread: the median ns per emit of the batches of the ring's
/// first lap, then of as many batches after it.
fn laps(tp: &DynamicTracepoint, data_len: usize) -> (f64, f64) {
    tp.emit(&[Value::U32(0)]).expect("the first emit makes the ring");
    let ring = ThisThreadsRing::open();
    let batch = || {
        ring.take_all();
        let start = Instant::now();
        for i in 0..BATCH {
            tp.emit(&[Value::U32(black_box(i))]).expect("emit");
        }
        start.elapsed().as_nanos() as f64 / f64::from(BATCH)
    };
    let mut first = Vec::new();
    while ring.head() < data_len as u64 {
        first.push(batch());
    }
    let mut later: Vec<f64> = (0..first.len()).map(|_| batch()).collect();
    assert_eq!(ring.lost(), 0, "every emit timed was written");
    (median(&mut first), median(&mut later))
}

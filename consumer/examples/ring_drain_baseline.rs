//! The limit for any consumer of user_events over perf: the rings a
//! session reads, drained by a loop that counts records and decodes
//! nothing. `harness/bench-consumer.sh` puts `usertrace record` beside it.
//!
//!   ring_drain_baseline [--buffer-size PAGES] [--write FILE] NAME -- COMMAND [ARGS...]
//!
//! Attaches to `user_events:NAME` on every CPU the way a session does (the
//! same `perf_event_attr`s from the consumer's `sys.rs`, each tracepoint
//! redirected into a dummy ring owner per CPU, mapped by the consumer's own
//! `ring.rs` with the same wakeup watermark), runs COMMAND, drains until it
//! exits, then prints `records R samples S lost L bytes B seconds T` on
//! stderr (T from attach to the last drain).
//!
//! With `--write FILE` it also writes each ring's published bytes into
//! FILE, one `writev` per ring read straight from the ring's pages, as the
//! perf.data archive does: the least any recorder that keeps the records
//! pays, the kernel's copy of every byte into the file. (FILE is records
//! back to back, not a perf.data file.)
//!
//! What it leaves out, on purpose: the sideband ring, /proc, time ordering,
//! thread names, decoding and output. It reads each record's type (and a
//! LOST record's count), nothing else. It also skips the consumer's attach
//! hold, which matters only for the first moments after the bit flips.

// The consumer keeps `sys` and `ring` private (they are its mechanics, not
// its API); compiling the very same files here is what makes this the same
// ring with the same attributes rather than a look-alike.
#[allow(dead_code)]
#[path = "../src/ring.rs"]
mod ring;
#[allow(dead_code)]
#[path = "../src/sys.rs"]
mod sys;
/// What `ring.rs` imports from its siblings, taken from the public API.
mod error {
    pub use usertrace_consumer::RingError;
}
mod record {
    pub use usertrace_consumer::record::HEADER_LEN;
}

use std::fs::File;
use std::io::{IoSlice, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::Command;
use std::time::Instant;

use usertrace_consumer::record::{PERF_RECORD_LOST, PERF_RECORD_SAMPLE};

struct CpuRing {
    owner: OwnedFd,
    ring: ring::Ring,
    /// The tracepoint's event on this CPU, writing into `ring`.
    _tracepoint: OwnedFd,
}

#[derive(Default)]
struct Counts {
    records: u64,
    samples: u64,
    lost: u64,
    bytes: u64,
    /// `--write FILE`: where each ring's published bytes go.
    file: Option<File>,
}

impl ring::RecordReader for Counts {
    fn record(&mut self, bytes: &[u8], _at: usize) {
        self.records += 1;
        self.bytes += bytes.len() as u64;
        let kind = u32::from_ne_bytes(bytes[0..4].try_into().unwrap());
        if kind == PERF_RECORD_SAMPLE {
            self.samples += 1;
        } else if kind == PERF_RECORD_LOST && bytes.len() >= 24 {
            // struct { header; u64 id; u64 lost; sample_id }.
            self.lost += u64::from_ne_bytes(bytes[16..24].try_into().unwrap());
        }
    }

    fn published(&mut self, first: &[u8], second: &[u8]) {
        let Some(file) = &mut self.file else { return };
        let mut slices = [IoSlice::new(first), IoSlice::new(second)];
        let mut slices = &mut slices[..];
        while slices.iter().any(|s| !s.is_empty()) {
            match file.write_vectored(slices) {
                Ok(0) => fail("--write", "the file took no bytes"),
                Ok(n) => IoSlice::advance_slices(&mut slices, n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => fail("--write", e),
            }
        }
    }
}

impl Counts {
    fn drain(&mut self, r: &mut CpuRing) {
        if let Err(e) = r.ring.read(self) {
            eprintln!("ring_drain_baseline: {e}");
        }
    }
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("ring_drain_baseline: {what}: {e}");
    std::process::exit(1);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut pages, mut rest) = (256usize, &args[..]);
    if rest.first().map(String::as_str) == Some("--buffer-size") {
        pages = rest.get(1).and_then(|p| p.parse().ok()).unwrap_or_else(|| fail("--buffer-size", "give a number of pages"));
        rest = &rest[2..];
    }
    let mut file = None;
    if rest.first().map(String::as_str) == Some("--write") {
        let path = rest.get(1).unwrap_or_else(|| fail("--write", "give a file"));
        file = Some(File::create(path).unwrap_or_else(|e| fail(path, e)));
        rest = &rest[2..];
    }
    let (Some(name), Some("--"), Some(command)) = (rest.first(), rest.get(1).map(String::as_str), rest.get(2..).filter(|c| !c.is_empty()))
    else {
        fail("usage", "ring_drain_baseline [--buffer-size PAGES] [--write FILE] NAME -- COMMAND [ARGS...]");
    };
    // As the session rounds it.
    let pages = pages.max(1).next_power_of_two();

    let tracefs = usertrace_consumer::find_tracefs().unwrap_or_else(|e| fail("tracefs", e));
    let id_path = tracefs.join("events/user_events").join(name).join("id");
    let id: u64 = std::fs::read_to_string(&id_path)
        .unwrap_or_else(|e| fail(&id_path.display().to_string(), e))
        .trim()
        .parse()
        .unwrap_or_else(|e| fail("tracepoint id", e));

    // The session's wakeup: a quarter of the ring (session/mod.rs, `wakeup`).
    let wakeup = (pages as u32 * 4096 / 4).max(4096);
    let cpus = sys::online_cpus().unwrap_or_else(|e| fail("online CPUs", e));
    let mut rings = Vec::new();
    for &cpu in &cpus {
        let owner = sys::open(&mut sys::ring_owner_attr(wakeup), cpu, None).unwrap_or_else(|e| fail("perf_event_open(ring)", e));
        let ring = ring::Ring::map(owner.as_fd(), pages).unwrap_or_else(|e| fail("mmap", e));
        rings.push((cpu, owner, ring));
    }
    let mut rings: Vec<CpuRing> = rings
        .into_iter()
        .map(|(cpu, owner, ring)| {
            let tracepoint = sys::open(&mut sys::tracepoint_attr(id, false), cpu, Some(owner.as_fd()))
                .unwrap_or_else(|e| fail("perf_event_open(tracepoint)", e));
            CpuRing { owner, ring, _tracepoint: tracepoint }
        })
        .collect();

    let start = Instant::now();
    let mut child = Command::new(&command[0]).args(&command[1..]).spawn().unwrap_or_else(|e| fail(&command[0], e));
    let mut counts = Counts { file, ..Counts::default() };
    loop {
        {
            let fds: Vec<_> = rings.iter().map(|r| r.owner.as_fd()).collect();
            // The session's loop wakes at least every 100 ms too.
            let _ = sys::poll_readable(&fds, 100);
        }
        for r in &mut rings {
            counts.drain(r);
        }
        if child.try_wait().unwrap_or_else(|e| fail("waiting for the command", e)).is_some() {
            break;
        }
    }
    // A loss is reported only ahead of the next record: a thread exiting on
    // each CPU, seen by a task probe in that ring, writes one (as the
    // session's flush does).
    for (i, r) in rings.iter_mut().enumerate() {
        let cpu = cpus[i];
        let probe = sys::open(&mut sys::exit_probe_attr(), cpu, Some(r.owner.as_fd()));
        let _ = std::thread::spawn(move || {
            let _ = sys::pin_current_thread(cpu);
        })
        .join();
        drop(probe);
        counts.drain(r);
    }
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "ring_drain_baseline: records {} samples {} lost {} bytes {} seconds {seconds:.3}",
        counts.records, counts.samples, counts.lost, counts.bytes
    );
}

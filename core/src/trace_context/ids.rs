//! Random trace and span ids: fresh 128-bit trace ids and nonzero 64-bit
//! span ids, unique in practice across threads, processes and machines.
//!
//! Each thread draws from its own xoshiro256++ generator (a few
//! nanoseconds, no lock, no system call), seeded with 32 bytes from the
//! kernel's random source (`getrandom`) at its first draw. Two generators
//! seeded independently over 256 bits do not meet in practice, which is
//! all W3C Trace Context asks of ids.
//!
//! A forked child inherits its parent's generator state, and would hand
//! out the very ids its parent hands out next: a root span in each would
//! share a trace id. So every fork child bumps an epoch (a `pthread_atfork`
//! handler, one atomic add: async-signal-safe), and a generator seeded in
//! another epoch seeds itself again before its next draw. An exec starts
//! afresh anyway: its threads have no generator yet.
//!
//! # Safety
//! The fork child handler is `unsafe extern "C"` as `pthread_atfork`
//! wants; it makes one atomic add, which is async-signal-safe.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Once;

use crate::sys;

/// Bumped in every fork child, before `fork()` returns there.
static FORK_EPOCH: AtomicU32 = AtomicU32::new(0);

/// In a fork child: the parent's generators (and open spans) are its
/// no longer. Async-signal-safe: one atomic add.
unsafe extern "C" fn after_fork_in_child() {
    // ATOMICS: Relaxed: the child has one thread when this runs, and that
    // thread reads the epoch after `fork()` returns.
    FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
}

/// Whether the fork handler is installed (in this process or an ancestor,
/// whose handlers a fork child inherits).
static HANDLER_INSTALLED: AtomicBool = AtomicBool::new(false);

/// How many forks separate this process from the first that drew an id
/// (or began a span): state kept per thread under another epoch belongs
/// to an ancestor. Installs the fork handler at the first call.
#[inline]
pub(crate) fn fork_epoch() -> u32 {
    // ATOMICS: Relaxed: a thread that sees false takes the Once, which
    // orders the installation; one that sees true needs nothing of it.
    if !HANDLER_INSTALLED.load(Ordering::Relaxed) {
        install_handler();
    }
    // ATOMICS: Relaxed: the epoch orders nothing; a thread compares it
    // with the one it stored itself.
    FORK_EPOCH.load(Ordering::Relaxed)
}

#[cold]
#[inline(never)]
fn install_handler() {
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| {
        // Without a handler (an OS without pthread_atfork here) a child
        // keeps its parent's generator: ids may then repeat across a fork.
        // SAFETY: `after_fork_in_child` makes one atomic add, which is
        // async-signal-safe, as pthread_atfork(3) requires of a child handler.
        let _ = unsafe { sys::at_fork_in_child(after_fork_in_child) };
        HANDLER_INSTALLED.store(true, Ordering::Relaxed);
    });
}

/// xoshiro256++ (Blackman and Vigna): 256 bits of state, 64 per step.
#[derive(Clone, Copy)]
struct Generator {
    state: [u64; 4],
    /// The fork epoch it was seeded in; `None` before its first seed.
    epoch: Option<u32>,
}

impl Generator {
    fn next(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

thread_local! {
    static GENERATOR: Cell<Generator> = const { Cell::new(Generator { state: [0; 4], epoch: None }) };
}

/// 256 bits from the kernel's random source; where that fails (a seccomp
/// filter, an OS without getrandom here), from std's per-process random
/// keys, which differ for each call too.
fn seed() -> [u64; 4] {
    let mut bytes = [0u8; 32];
    let state: [u64; 4] = if sys::random_bytes(&mut bytes).is_ok() {
        std::array::from_fn(|i| u64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes")))
    } else {
        std::array::from_fn(|i| RandomState::new().hash_one(i))
    };
    // All zeros is xoshiro's one state that stays put.
    if state == [0; 4] {
        [1, 0, 0, 0]
    } else {
        state
    }
}

/// The next `N` 64-bit draws of this thread's generator, seeded first if
/// it has not been in this process: one thread-local access for all.
#[inline]
fn draw<const N: usize>() -> [u64; N] {
    let epoch = fork_epoch();
    GENERATOR.with(|cell| {
        let mut g = cell.get();
        if g.epoch != Some(epoch) {
            g = reseeded(epoch);
        }
        let out = std::array::from_fn(|_| g.next());
        cell.set(g);
        out
    })
}

#[cold]
#[inline(never)]
fn reseeded(epoch: u32) -> Generator {
    Generator { state: seed(), epoch: Some(epoch) }
}

/// A new W3C span id: 64 random bits, never 0.
#[inline]
pub fn new_span_id() -> u64 {
    loop {
        let [id] = draw::<1>();
        if id != 0 {
            return id;
        }
    }
}

/// A new W3C trace id: 128 random bits, never 0.
#[inline]
pub fn new_trace_id() -> u128 {
    new_root_ids().0
}

/// A new trace id and span id, for the root of a new trace, drawn at once.
#[inline]
pub(crate) fn new_root_ids() -> (u128, u64) {
    loop {
        let [hi, lo, span] = draw::<3>();
        let trace = (u128::from(hi) << 64) | u128::from(lo);
        if trace != 0 && span != 0 {
            return (trace, span);
        }
    }
}

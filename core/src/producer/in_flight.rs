//! Emits in progress, so that what they use is freed only after them.
//!
//! Two things must outlive every emit that may use them: the process-wide
//! `user_events_data` descriptor (closed when the last registration goes,
//! see `data_file`), and, in a binding, whatever an emit reached through a
//! pointer that a release clears and then frees (libusertrace's provider
//! release runs from a destructor at `exit()` while other threads may still
//! be emitting). Both use this one mechanism.
//!
//! It is a two-counter grace period (as in sleepable RCU): an emit counts
//! itself in the counter of the current epoch while it runs ([`EmitScope`]);
//! after clearing what new emits must not reach, [`wait_for_emits`] flips
//! the epoch and waits for the old counter to drain, twice, so that neither
//! counter still holds an emit from before the clear. Flipping first moves
//! new emits to the other counter, so a steady stream of emits cannot keep
//! the wait going. The cost is on the enabled path only: two atomic adds
//! next to a `writev`. Scopes nest (a binding's scope around the core's).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static EPOCH: AtomicUsize = AtomicUsize::new(0);
static EMITS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// One emit in progress, counted until dropped. Enter it before loading
/// anything a release may clear (SeqCst), and use that only inside it.
#[must_use = "the emit is counted only while the scope lives"]
pub struct EmitScope(usize);

impl EmitScope {
    /// Counts an emit in.
    #[inline]
    pub fn enter() -> EmitScope {
        let epoch = EPOCH.load(Ordering::SeqCst) & 1;
        // ATOMICS: SeqCst orders this increment before the caller's SeqCst
        // load of the pointer, against the release's SeqCst clear of it
        // and its SeqCst loads of the counters: either the emit sees the
        // cleared pointer, or the release sees the emit counted.
        EMITS[epoch].fetch_add(1, Ordering::SeqCst);
        EmitScope(epoch)
    }
}

impl Drop for EmitScope {
    #[inline]
    fn drop(&mut self) {
        // ATOMICS: Release: the emit's reads through the pointer happen
        // before the release's Acquire-or-stronger load sees the count drop.
        EMITS[self.0].fetch_sub(1, Ordering::Release);
    }
}

/// Longest a release waits. Emits take microseconds; a count that does not
/// drain is most likely stale: a child forked while another thread was
/// emitting inherits that count, but not the thread.
const MAX_WAIT: Duration = Duration::from_millis(100);

/// Waits until no emit that could have loaded something cleared (SeqCst)
/// before this call is still using it. False if that could not be
/// established in time: the caller must then leak what it meant to free.
pub fn wait_for_emits() -> bool {
    let deadline = Instant::now() + MAX_WAIT;
    for _ in 0..2 {
        let drained = EPOCH.fetch_add(1, Ordering::SeqCst) & 1;
        while EMITS[drained].load(Ordering::SeqCst) != 0 {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::yield_now();
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicPtr};
    use std::sync::Arc;

    const POISON: u64 = 0xDEAD_DEAD_DEAD_DEAD;
    /// The counters are process-wide: these tests must not overlap.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_count_that_never_drains_gives_up_instead_of_hanging() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        // As in a child forked mid-emit: counted, and nobody to uncount it.
        let stale = EmitScope::enter();
        let start = Instant::now();
        assert!(!wait_for_emits());
        assert!(start.elapsed() >= MAX_WAIT);
        drop(stale);
        assert!(wait_for_emits());
    }

    #[test]
    fn a_release_waits_for_emits_that_saw_the_pointer() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let slot = Arc::new(AtomicPtr::new(Box::into_raw(Box::new(0u64))));
        let stop = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicUsize::new(0));
        let emitters: Vec<_> = (0..3)
            .map(|_| {
                let (slot, stop, reads) = (slot.clone(), stop.clone(), reads.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let _emit = EmitScope::enter();
                        let p = slot.load(Ordering::SeqCst);
                        // SAFETY: the releaser frees only after
                        // wait_for_emits, which waits for this guard.
                        let first = unsafe { std::ptr::read_volatile(p) };
                        std::thread::yield_now();
                        // SAFETY: as above; still inside the guard.
                        let second = unsafe { std::ptr::read_volatile(p) };
                        // A live value never changes; a released one is
                        // poisoned, then its memory is reused.
                        assert!(first == second && first != POISON, "an emit read a released pointer: {first:#x} then {second:#x}");
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        let mut swaps = 0u64;
        // Until both enough swaps and enough reads, unless an emitter failed.
        while (swaps < 2000 || reads.load(Ordering::Relaxed) < 20_000) && !emitters.iter().any(|e| e.is_finished()) {
            swaps += 1;
            let old = slot.swap(Box::into_raw(Box::new(swaps)), Ordering::SeqCst);
            assert!(wait_for_emits(), "emits did not drain within {MAX_WAIT:?}");
            // SAFETY: no emit can still hold `old`. Poisoned before it is
            // freed, so an emit still reading it would see the change.
            unsafe {
                std::ptr::write_volatile(old, POISON);
                drop(Box::from_raw(old));
            }
        }
        stop.store(true, Ordering::Relaxed);
        for e in emitters {
            e.join().expect("an emitter failed");
        }
        // SAFETY: the emitters are gone.
        unsafe { drop(Box::from_raw(slot.swap(std::ptr::null_mut(), Ordering::SeqCst))) };
    }
}

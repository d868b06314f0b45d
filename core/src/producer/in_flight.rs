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
//! the epoch and waits for the old counter to drain, then again for the
//! other, so that neither counter still holds an emit from before the
//! clear. Flipping first moves new emits to the other counter, so a steady
//! stream of emits cannot keep the wait going. The cost is on the enabled
//! path only: two atomic adds next to a `writev`. Scopes nest (a binding's
//! scope around the core's).
//!
//! # One counter pair per thread
//!
//! Each thread counts in a counter pair of its own (a [`slot`]), so an emit
//! writes no cache line that another thread writes. With one process-wide
//! pair, every emit on every core wrote the same line, and two threads
//! emitting at once each paid several times what one thread alone did
//! (`core/benches/emit_scaling.rs`, BENCHMARKS.md). The release reads every
//! slot instead.
//! A scope decrements the counter it incremented, wherever it is dropped;
//! when a thread exits while a scope it entered lives on, the next owner of
//! its slot adds to that count and takes from it, and the count still
//! drains only when the scope ends: a counter is a sum, and the release
//! waits for the sum.
//!
//! # Why reading slot by slot is sound
//!
//! The release reads the slots one after another, not in one snapshot, so
//! an emit can begin in a slot already read. That is fine. The release's
//! clear, its load of the list head and its reads of the counters are all
//! SeqCst, as are an emit's increment and its load of the pointer; all of
//! them lie in one total order S that agrees with each thread's program
//! order. Take an emit counting in slot X, and the release's read R of X's
//! counter in the emit's epoch parity, made after the clear:
//!
//! - If the emit's increment comes before R in S, R sees it (or a later
//!   value), and the release waits until a read gives 0. Every decrement
//!   comes after its own increment, so a 0 after this increment means its
//!   decrement has come too. That decrement is Release, and every later
//!   change of the counter is a read-modify-write, which continues its
//!   release sequence: the read that sees 0 synchronises with it, so the
//!   emit's uses of the pointer happened before the release frees it.
//! - If the increment comes after R in S, it comes after the clear, which
//!   precedes R in the release's program order; the emit's SeqCst load of
//!   the pointer comes after its own increment, so it sees the clear and the
//!   emit does not use what is freed.
//!
//! A slot pushed after the release loaded the list head is not read at all.
//! Its push is SeqCst, and its thread pushes it before counting in it; the
//! head load did not see the push, so it precedes the push in S, and that
//! emit's increment comes after the clear: the second case again.
//!
//! Each pass reads every slot's counter of one parity; the release makes
//! passes until it has drained both parities, so every emit's counter is
//! read at least once after the clear, whichever parity it loaded. Which
//! parity an emit counts in therefore matters only to how soon the wait
//! ends. Two passes are not enough by themselves: two releases can run at
//! once (the descriptor's close and libusertrace's provider release hold
//! different locks), and if the other one flips between this one's two
//! flips, both of this one's passes read the same parity.
//!
//! # Safety
//! Only the tests dereference and free pointers, and only after
//! [`wait_for_emits`] says no emit can hold them: the guarantee this module
//! exists to give.
#![allow(unsafe_code)]

mod slot;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A value alone on its 128-byte block, as [`slot::Slot`] is.
#[repr(align(128))]
struct OwnLine<T>(T);

/// Which counter of each slot new emits count in (its lowest bit). Every
/// emit reads it and only releases write it: on a line of its own, so no
/// write to a neighbouring static invalidates it.
static EPOCH: OwnLine<AtomicUsize> = OwnLine(AtomicUsize::new(0));

/// One emit in progress, counted until dropped. Enter it before loading
/// anything a release may clear (SeqCst), and use that only inside it. It
/// may be dropped on another thread: it uncounts where it counted.
#[must_use = "the emit is counted only while the scope lives"]
pub struct EmitScope(&'static AtomicUsize);

impl EmitScope {
    /// Counts an emit in, in this thread's own slot.
    #[inline]
    pub fn enter() -> EmitScope {
        let slot = slot::current();
        // ATOMICS: Relaxed: the parity only steers new emits away from the
        // counter a release drains; the release drains both, whichever one
        // an emit picks (see the module doc).
        let emits = &slot.emits[EPOCH.0.load(Ordering::Relaxed) & 1];
        // ATOMICS: SeqCst orders this increment before the caller's SeqCst
        // load of the pointer, against the release's SeqCst clear of it
        // and its SeqCst loads of the counters: either the emit sees the
        // cleared pointer, or the release sees the emit counted.
        emits.fetch_add(1, Ordering::SeqCst);
        EmitScope(emits)
    }
}

impl Drop for EmitScope {
    #[inline]
    fn drop(&mut self) {
        // ATOMICS: Release: the emit's reads through the pointer happen
        // before the release's Acquire-or-stronger load sees the count drop.
        self.0.fetch_sub(1, Ordering::Release);
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
    let mut drained = [false; 2];
    while !(drained[0] && drained[1]) {
        // ATOMICS: SeqCst, like the reads below, so the flip comes before
        // them: emits that start during this pass count in the other
        // counter, and the one read here only falls. (Safety does not
        // rest on the flip; see the module doc.)
        let parity = EPOCH.0.fetch_add(1, Ordering::SeqCst) & 1;
        for slot in slot::all() {
            // ATOMICS: SeqCst, against the emits' SeqCst increments (see
            // the module doc); as an acquire it pairs with the Release
            // decrements.
            while slot.emits[parity].load(Ordering::SeqCst) != 0 {
                if Instant::now() > deadline {
                    return false;
                }
                std::thread::yield_now();
            }
        }
        drained[parity] = true;
    }
    true
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicPtr};
    use std::sync::{Arc, Barrier};

    const POISON: u64 = 0xDEAD_DEAD_DEAD_DEAD;
    /// The epoch and the slot list are process-wide: these tests (and
    /// `slot`'s) must not overlap.
    pub(super) static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
        releases_under_emits(1, 3, None);
    }

    #[test]
    fn a_release_waits_for_emits_of_sixteen_threads() {
        releases_under_emits(1, 16, None);
    }

    #[test]
    fn a_release_waits_for_emits_of_threads_that_come_and_go() {
        // Each thread exits after 20 emits and its slot goes to the next,
        // while releases walk the slots.
        releases_under_emits(1, 4, Some(20));
    }

    #[test]
    fn two_releases_at_once_each_wait_for_the_emits_that_saw_their_pointer() {
        // Their epoch flips interleave (see the module doc).
        releases_under_emits(2, 4, None);
    }

    #[test]
    fn a_scope_that_outlives_its_thread_holds_the_release() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let scope = std::thread::spawn(EmitScope::enter).join().unwrap();
        // Its thread has given its slot back; another thread counts in and
        // out of it (or of another free slot) meanwhile.
        std::thread::spawn(|| drop(EmitScope::enter())).join().unwrap();
        assert!(!wait_for_emits(), "the release did not wait for a scope whose thread had exited");
        drop(scope);
        assert!(wait_for_emits());
    }

    #[test]
    fn a_release_waits_for_every_thread_in_its_own_slot() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        const THREADS: usize = 64;
        let entered = Barrier::new(THREADS + 1);
        let checked = Barrier::new(THREADS + 1);
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| {
                    let scope = EmitScope::enter();
                    entered.wait();
                    checked.wait();
                    drop(scope);
                });
            }
            entered.wait();
            assert!(!wait_for_emits(), "the release did not wait for 64 threads' scopes");
            checked.wait();
        });
        assert!(wait_for_emits());
    }

    /// Swaps and frees pointers that `emitters` threads keep reading, each
    /// inside a scope, and checks that no read sees one freed. Each of
    /// `releasers` threads owns one pointer and releases it over and over.
    /// With `emits_per_thread`, each emitter is a lane of threads that exit
    /// after that many emits, one after another, so slots are given back
    /// and claimed again while releases walk them.
    fn releases_under_emits(releasers: usize, emitters: usize, emits_per_thread: Option<u64>) {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let pointers: Arc<Vec<AtomicPtr<u64>>> =
            Arc::new((0..releasers).map(|_| AtomicPtr::new(Box::into_raw(Box::new(0u64)))).collect());
        let stop = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicUsize::new(0));
        let emit_until = |pointers: &[AtomicPtr<u64>], stop: &AtomicBool, reads: &AtomicUsize, emits: u64| {
            for i in 0..emits {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let _emit = EmitScope::enter();
                let p = pointers[i as usize % pointers.len()].load(Ordering::SeqCst);
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
        };
        let emitters: Vec<_> = (0..emitters)
            .map(|_| {
                let (pointers, stop, reads) = (pointers.clone(), stop.clone(), reads.clone());
                std::thread::spawn(move || match emits_per_thread {
                    None => emit_until(&pointers, &stop, &reads, u64::MAX),
                    Some(emits) => {
                        while !stop.load(Ordering::Relaxed) {
                            let (pointers, stop, reads) = (pointers.clone(), stop.clone(), reads.clone());
                            std::thread::spawn(move || emit_until(&pointers, &stop, &reads, emits))
                                .join()
                                .expect("an emitter failed");
                        }
                    }
                })
            })
            .collect();
        std::thread::scope(|s| {
            for pointer in pointers.iter() {
                let (reads, emitters) = (&reads, &emitters);
                s.spawn(move || {
                    let (mut freed, mut leaked) = (0u64, 0u64);
                    let start = Instant::now();
                    // Until both enough frees and enough reads (or half a
                    // minute on a loaded machine), unless an emitter failed.
                    while (freed < 2000 || reads.load(Ordering::Relaxed) < 20_000)
                        && start.elapsed() < Duration::from_secs(30)
                        && !emitters.iter().any(|e| e.is_finished())
                    {
                        let old = pointer.swap(Box::into_raw(Box::new(freed + leaked + 1)), Ordering::SeqCst);
                        if wait_for_emits() {
                            // SAFETY: no emit can still hold `old`. Poisoned
                            // before it is freed, so an emit still reading
                            // it would see the change.
                            unsafe {
                                std::ptr::write_volatile(old, POISON);
                                drop(Box::from_raw(old));
                            }
                            freed += 1;
                        } else {
                            // As a caller must: `old` is leaked. (An emitter
                            // can be descheduled inside its scope for longer
                            // than MAX_WAIT when other jobs load the machine.)
                            leaked += 1;
                        }
                    }
                    assert!(freed >= 200, "only {freed} releases drained ({leaked} gave up): too few to test anything");
                });
            }
        });
        stop.store(true, Ordering::Relaxed);
        for e in emitters {
            e.join().expect("an emitter failed");
        }
        for pointer in pointers.iter() {
            // SAFETY: the emitters are gone.
            unsafe { drop(Box::from_raw(pointer.swap(std::ptr::null_mut(), Ordering::SeqCst))) };
        }
    }
}

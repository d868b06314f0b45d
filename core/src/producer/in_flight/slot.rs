//! One pair of emit counters per thread, so that an emit writes only a
//! cache line that no other thread writes.
//!
//! A thread claims a slot at its first emit, and a thread-local destructor
//! gives it back when the thread exits, for the next thread to reuse: the
//! list grows to the most threads that ever emitted at the same time, not to
//! every thread that ever emitted. Slots are never freed (a scope may
//! outlive its thread, see [`EmitScope`](super::EmitScope)) and the list is
//! push-only, so walking it needs no lock and every slot in it stays valid.
//!
//! Emits that come after the destructor has run (from other thread-locals'
//! destructors, later in the thread's exit) count in a shared slot that is
//! never given out: contended as the old process-wide pair was, and just as
//! correct. A forked child keeps the forking thread's slot; the slots of the
//! parent's other threads stay claimed there for good, since their threads
//! do not exist in the child to give them back (128 bytes each).
//!
//! Slots come from the system allocator, not the program's global
//! allocator: a global allocator may emit events itself, and the first emit
//! of a thread would then call back into it; and an enabled emit promises
//! not to allocate (`core/tests/emitting_allocates_nothing.rs`). In a
//! shared library, glibc keeps the library loaded while a thread that
//! registered the destructor is alive.
//!
//! # Safety
//! Slots come from the system allocator with a `Slot`'s layout, are written
//! whole before a SeqCst exchange publishes them, are never freed, and after
//! publication are only read through shared references (their fields are
//! atomics).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// One thread's emits in progress, one counter per epoch parity.
///
/// 128-byte aligned: adjacent-line prefetchers fetch 64-byte lines in
/// pairs, so two slots on one 128-byte block would still bounce it.
#[repr(align(128))]
pub(super) struct Slot {
    pub(super) emits: [AtomicUsize; 2],
    /// Whether a live thread owns it; the shared slot always is.
    claimed: AtomicBool,
    /// The slot pushed before this one; written only before this one is
    /// pushed. The shared slot ends the list.
    next: Option<&'static Slot>,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 128 && std::mem::align_of::<Slot>() == 128);

impl Slot {
    const fn new(claimed: bool, next: Option<&'static Slot>) -> Slot {
        Slot { emits: [AtomicUsize::new(0), AtomicUsize::new(0)], claimed: AtomicBool::new(claimed), next }
    }
}

/// For emits of a thread whose own slot is already given back, or could
/// not be allocated. Claimed from the start, so it is never given out.
static SHARED: Slot = Slot::new(true, None);

/// The newest slot; from it, `next` leads through every slot to `SHARED`.
static HEAD: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::addr_of!(SHARED).cast_mut());

/// Gives the thread's slot back when the thread exits.
struct Owner(Cell<Option<&'static Slot>>);

impl Drop for Owner {
    fn drop(&mut self) {
        // Destructors that run after this one may still emit.
        CURRENT.with(|current| current.set(Some(&SHARED)));
        if let Some(slot) = self.0.take() {
            // ATOMICS: Relaxed: owning a slot only keeps threads off each
            // other's cache line. Its counters are read-modify-written
            // atomically whoever owns it, so there is nothing to order.
            slot.claimed.store(false, Ordering::Relaxed);
        }
    }
}

thread_local! {
    /// This thread's slot once claimed, `SHARED` once given back. It has no
    /// destructor, so reading it is a plain thread-local load with no
    /// "initialised yet?" check.
    static CURRENT: Cell<Option<&'static Slot>> = const { Cell::new(None) };
    /// Holds the claimed slot only to give it back; touched once per thread.
    static OWNER: Owner = const { Owner(Cell::new(None)) };
}

/// This thread's slot, claimed at its first call.
#[inline]
pub(super) fn current() -> &'static Slot {
    match CURRENT.with(Cell::get) {
        Some(slot) => slot,
        None => claim_for_this_thread(),
    }
}

#[cold]
#[inline(never)]
fn claim_for_this_thread() -> &'static Slot {
    // Err: this thread's destructors have run, or are running; no
    // destructor would give a slot claimed now back.
    let own = OWNER.try_with(|owner| {
        let slot = claim();
        owner.0.set(slot);
        slot
    });
    let slot = own.ok().flatten().unwrap_or(&SHARED);
    CURRENT.with(|current| current.set(Some(slot)));
    slot
}

/// A slot that was given back, or a new one; None if allocation failed.
fn claim() -> Option<&'static Slot> {
    let free = all().find(|slot| {
        // ATOMICS: Relaxed, as in `Owner::drop`. Loaded first, so that the
        // walk only reads the lines of slots in use.
        !slot.claimed.load(Ordering::Relaxed)
            && slot.claimed.compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    });
    free.or_else(push_new)
}

fn push_new() -> Option<&'static Slot> {
    // SAFETY: GlobalAlloc::alloc requires a layout of non-zero size; a
    // Slot's is 128 bytes.
    let new = unsafe { System.alloc(Layout::new::<Slot>()) }.cast::<Slot>();
    if new.is_null() {
        return None;
    }
    // ATOMICS: Acquire, so the slot `next` will point to is seen whole.
    let mut head = HEAD.load(Ordering::Acquire);
    loop {
        // SAFETY: `new` is allocated for a Slot (size and alignment from its
        // layout), and only this thread can see it until the exchange below
        // publishes it; after that it is never written except atomically.
        unsafe { new.write(Slot::new(true, slot_at(head))) };
        // ATOMICS: Release publishes the write above to the walks, which
        // load the head with Acquire or stronger. SeqCst because the
        // release's walk relies on it: see "Why reading slot by slot is
        // sound" in `in_flight`.
        match HEAD.compare_exchange_weak(head, new, Ordering::SeqCst, Ordering::Acquire) {
            Ok(_) => return slot_at(new),
            Err(now) => head = now,
        }
    }
}

/// The slot `ptr` points to.
fn slot_at(ptr: *mut Slot) -> Option<&'static Slot> {
    // SAFETY: every pointer in HEAD or in a `next` is `SHARED` or a slot
    // that `push_new` wrote before publishing it; none is ever freed, and
    // after publication each is only accessed through shared references.
    unsafe { ptr.as_ref() }
}

/// Every slot there is, newest first, as of one SeqCst load of the head.
pub(super) fn all() -> impl Iterator<Item = &'static Slot> {
    // ATOMICS: SeqCst: see "Why reading slot by slot is sound" in
    // `in_flight`. It also acquires every push so far (each push is a
    // read-modify-write of the head, so it continues the release sequences
    // of the pushes before it), so every `next` on the way is seen written.
    std::iter::successors(slot_at(HEAD.load(Ordering::SeqCst)), |slot| slot.next)
}

#[cfg(test)]
mod tests {
    use super::super::tests::SERIAL;
    use super::super::EmitScope;
    use super::*;
    use std::cell::RefCell;
    use std::sync::mpsc::{channel, Sender};

    fn is_shared(slot: &Slot) -> bool {
        std::ptr::eq(slot, &SHARED)
    }

    /// Whether this thread's emits count in the shared slot, and whether the
    /// scope is counted there; sent from a thread-local destructor.
    struct EmitsWhenDropped(RefCell<Option<Sender<(bool, bool)>>>);

    impl Drop for EmitsWhenDropped {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let scope = EmitScope::enter();
                let in_shared = SHARED.emits.iter().any(|c| std::ptr::eq(c, scope.0));
                let counted = scope.0.load(Ordering::SeqCst) > 0;
                let _ = tx.send((in_shared, counted));
            }
        }
    }

    thread_local! {
        static LATE: EmitsWhenDropped = const { EmitsWhenDropped(RefCell::new(None)) };
    }

    #[test]
    fn a_thread_that_exits_gives_its_slot_to_the_next() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let before = all().count();
        for _ in 0..200 {
            // join returns after the thread's destructors have run.
            std::thread::spawn(|| drop(EmitScope::enter())).join().unwrap();
        }
        // One slot reused 200 times; other tests' threads may claim a few
        // while this runs, but nowhere near one per thread.
        let grown = all().count() - before;
        assert!(grown <= 8, "200 threads in a row took {grown} new slots");
    }

    #[test]
    fn live_threads_never_share_a_slot() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        const THREADS: usize = 64;
        let all_claimed = std::sync::Barrier::new(THREADS);
        let mut slots: Vec<usize> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..THREADS)
                .map(|_| {
                    s.spawn(|| {
                        let slot = current() as *const Slot as usize;
                        // Nobody exits (and gives a slot back) before all
                        // have claimed theirs.
                        all_claimed.wait();
                        slot
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), THREADS, "live threads shared slots");
        assert!(!slots.contains(&(&SHARED as *const Slot as usize)));
    }

    #[test]
    fn the_shared_slot_is_never_given_out() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        assert!(all().last().is_some_and(is_shared), "the list does not end with the shared slot");
        std::thread::spawn(|| assert!(!is_shared(current()))).join().unwrap();
        assert!(SHARED.claimed.load(Ordering::Relaxed));
    }

    #[test]
    fn an_emit_after_the_slot_was_given_back_counts_in_the_shared_slot() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            // Registered first, so its destructor runs after `Owner`'s:
            // glibc runs thread-local destructors newest first.
            LATE.with(|late| *late.0.borrow_mut() = Some(tx));
            drop(EmitScope::enter());
        })
        .join()
        .unwrap();
        let (in_shared, counted) = rx.recv().unwrap();
        assert!(in_shared, "an emit after the thread gave its slot back counted in that slot");
        assert!(counted);
    }

    #[test]
    fn a_first_emit_from_a_destructor_still_gives_its_slot_back() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let before = all().count();
        for _ in 0..50 {
            let (tx, rx) = channel();
            // The thread's only emit is in a destructor, so the slot is
            // claimed (and `Owner` registered) while the thread exits.
            std::thread::spawn(move || LATE.with(|late| *late.0.borrow_mut() = Some(tx))).join().unwrap();
            assert!(rx.recv().unwrap().1);
        }
        let grown = all().count() - before;
        assert!(grown <= 8, "50 threads that emitted only while exiting took {grown} new slots");
    }
}

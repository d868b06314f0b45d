//! The layer's state per callsite, found from the callsite's `Metadata` on
//! every span and event without a lock: what `enabled` reads before the
//! enable word.
//!
//! A callsite's `Metadata` is a `static`, so its address names it. The
//! table is open addressing on that address, and only grows: each slot is
//! set once, under the insert lock, and a full-enough array is copied into
//! one twice its size, published by an index that readers load first. A
//! reader of the previous array may miss an entry added since: it then
//! takes the locked path, which finds it. Arrays are freed with the table.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tracing_core::Metadata;

/// Slots of the first array; each next one has twice as many.
const FIRST_LEN: usize = 64;
/// Arrays the table may grow to: 64 × 2^19 slots, far past the kernel's
/// own limit of 32768 user events.
const LEVELS: usize = 20;

type Slots<T> = Box<[OnceLock<(usize, Arc<T>)>]>;

/// Entries of type `T`, one per callsite.
pub(crate) struct Callsites<T> {
    /// Which of `levels` readers use.
    current: AtomicUsize,
    levels: [OnceLock<Slots<T>>; LEVELS],
    /// Held to insert; counts the entries.
    insert: Mutex<usize>,
}

fn key(meta: &Metadata<'_>) -> usize {
    meta as *const Metadata<'_> as usize
}

fn empty<T>(len: usize) -> Slots<T> {
    (0..len).map(|_| OnceLock::new()).collect()
}

/// The slot of `key` in `slots`, or the empty slot where it would go.
fn probe<T>(slots: &[OnceLock<(usize, Arc<T>)>], key: usize) -> &OnceLock<(usize, Arc<T>)> {
    let bits = slots.len().trailing_zeros();
    // Fibonacci hashing: the multiply spreads the address's middle bits,
    // which differ between statics, into the top ones.
    let mut i = (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_shr(64 - bits) as usize;
    loop {
        let slot = &slots[i];
        match slot.get() {
            Some((k, _)) if *k != key => i = (i + 1) & (slots.len() - 1),
            _ => return slot,
        }
    }
}

impl<T> Callsites<T> {
    pub(crate) fn new() -> Self {
        let table = Callsites { current: AtomicUsize::new(0), levels: std::array::from_fn(|_| OnceLock::new()), insert: Mutex::new(0) };
        let _ = table.levels[0].set(empty(FIRST_LEN));
        table
    }

    /// The entry of `meta`'s callsite, if it has one.
    #[inline]
    pub(crate) fn get(&self, meta: &Metadata<'_>) -> Option<&T> {
        // ATOMICS: Acquire pairs with the Release store in `get_or_insert`,
        // so the array at the new index is seen complete.
        let level = self.current.load(Ordering::Acquire);
        let slots = self.levels[level].get()?;
        let key = key(meta);
        // The slot may have been set since the probe saw it empty: by
        // another callsite's insert, so the key is checked again.
        probe(slots, key).get().filter(|(k, _)| *k == key).map(|(_, entry)| &**entry)
    }

    /// The entry of `meta`'s callsite, made by `make` if it has none;
    /// `None` only if the table is full (never, in practice).
    pub(crate) fn get_or_insert(&self, meta: &Metadata<'_>, make: impl FnOnce() -> T) -> Option<&T> {
        if let Some(entry) = self.get(meta) {
            return Some(entry);
        }
        let mut count = self.insert.lock().unwrap_or_else(|p| p.into_inner());
        let mut level = self.current.load(Ordering::Relaxed);
        let mut slots = self.levels[level].get().expect("the current array is set");
        let slot = probe(slots, key(meta));
        if let Some((_, entry)) = slot.get() {
            return Some(entry);
        }
        // At most half full, so that probes stay short and end.
        if (*count + 1) * 2 > slots.len() {
            if level + 1 == LEVELS {
                return None;
            }
            let bigger = empty(slots.len() * 2);
            for (k, entry) in slots.iter().filter_map(OnceLock::get) {
                let _ = probe(&bigger, *k).set((*k, Arc::clone(entry)));
            }
            let _ = self.levels[level + 1].set(bigger);
            level += 1;
            // ATOMICS: Release: see `get`.
            self.current.store(level, Ordering::Release);
            slots = self.levels[level].get().expect("just set");
        }
        let slot = probe(slots, key(meta));
        let _ = slot.set((key(meta), Arc::new(make())));
        *count += 1;
        slot.get().map(|(_, entry)| &**entry)
    }

    /// Every entry.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&T)) {
        let level = self.current.load(Ordering::Acquire);
        if let Some(slots) = self.levels[level].get() {
            slots.iter().filter_map(OnceLock::get).for_each(|(_, entry)| f(entry));
        }
    }
}

#[cfg(test)]
mod tests;

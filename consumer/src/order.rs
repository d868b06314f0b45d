//! Putting records from per-CPU rings into one time order.
//!
//! Each ring is (nearly) in time order, but rings are read one after the
//! other. This is perf's round algorithm (tools/perf/util/session.c,
//! "finished round"): a round reads every ring once; records are queued;
//! at the end of a round, records no newer than the newest timestamp of the
//! *previous* round are released. A record that shows up in a later round
//! was written after that earlier round was read, so it cannot be older.
//!
//! The queue keeps its buffers from round to round: a small key per record
//! (time, arrival number, slot) is sorted, the records stay in their slots.
//! The sort is a merge of the runs already in time order (what each ring
//! read gave), so it costs little when the rings are in order, and nothing
//! is allocated once the buffers have grown to the largest round.

/// A queued record's place in the order: time, then arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    time: u64,
    seq: u64,
    /// Where its value is, in `Orderer::slots`.
    slot: usize,
}

/// A time-ordering queue fed in rounds.
pub struct Orderer<T> {
    /// The queued records' keys: those carried over from earlier rounds
    /// first, in order, then this round's in arrival order.
    keys: Vec<Key>,
    /// The queued values; a released one leaves `None`, its slot in `free`.
    slots: Vec<Option<T>>,
    free: Vec<usize>,
    /// The sort's buffers, kept for the next round.
    scratch: Vec<Key>,
    runs: Vec<usize>,
    seq: u64,
    round_max: u64,
    previous_round_max: Option<u64>,
    released_through: Option<u64>,
}

impl<T> Default for Orderer<T> {
    fn default() -> Self {
        Orderer {
            keys: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            scratch: Vec::new(),
            runs: Vec::new(),
            seq: 0,
            round_max: 0,
            previous_round_max: None,
            released_through: None,
        }
    }
}

impl<T> Orderer<T> {
    /// An empty queue; the first round releases nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a record; equal times keep their arrival order.
    pub fn push(&mut self, time: u64, value: T) {
        self.round_max = self.round_max.max(time);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(value);
                slot
            }
            None => {
                self.slots.push(Some(value));
                self.slots.len() - 1
            }
        };
        self.keys.push(Key { time, seq: self.seq, slot });
        self.seq += 1;
    }

    /// Ends a round: releases, in time order, everything no newer than the
    /// newest time seen up to the end of the previous round.
    pub fn end_round(&mut self, out: &mut impl FnMut(u64, T)) {
        if let Some(limit) = self.previous_round_max {
            self.release(Some(limit), out);
            self.released_through = Some(limit);
        }
        self.previous_round_max = Some(self.round_max);
    }

    /// The watermark: every record at or before this time has been
    /// released, and no later round will release an older one.
    pub fn released_through(&self) -> Option<u64> {
        self.released_through
    }

    /// Releases everything: no more rounds will come.
    pub fn flush(&mut self, out: &mut impl FnMut(u64, T)) {
        self.release(None, out);
    }

    /// Records queued and not yet released.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Sorts the keys and releases, in order, every record no newer than
    /// `limit` (all of them without one).
    fn release(&mut self, limit: Option<u64>, out: &mut impl FnMut(u64, T)) {
        sort_keys(&mut self.keys, &mut self.scratch, &mut self.runs);
        let count = match limit {
            Some(limit) => self.keys.partition_point(|k| k.time <= limit),
            None => self.keys.len(),
        };
        for key in self.keys.drain(..count) {
            if let Some(value) = self.slots[key.slot].take() {
                self.free.push(key.slot);
                out(key.time, value);
            }
        }
        if self.keys.is_empty() {
            // Nothing is queued: the slots start over, buffers kept.
            self.slots.clear();
            self.free.clear();
        }
    }
}

/// Sorts `keys` (unique, by time then arrival) with a natural merge sort:
/// the runs already in order are found, then merged pairwise through
/// `scratch` until one is left. `runs` holds where each run ends.
///
/// Not `slice::sort`: it finds runs too, but takes a fresh buffer on every
/// call, and fresh pages are what this queue is built to avoid;
/// `sort_unstable` allocates nothing but does not use the runs.
fn sort_keys(keys: &mut Vec<Key>, scratch: &mut Vec<Key>, runs: &mut Vec<usize>) {
    runs.clear();
    runs.extend((1..keys.len()).filter(|&i| keys[i] < keys[i - 1]));
    if runs.is_empty() {
        return;
    }
    runs.push(keys.len());
    while runs.len() > 1 {
        scratch.clear();
        let (mut start, mut merged) = (0, 0);
        for pair in 0..runs.len().div_ceil(2) {
            let mid = runs[2 * pair];
            let end = runs.get(2 * pair + 1).copied().unwrap_or(mid);
            merge(&keys[start..mid], &keys[mid..end], scratch);
            runs[merged] = end;
            merged += 1;
            start = end;
        }
        runs.truncate(merged);
        std::mem::swap(keys, scratch);
    }
}

/// Appends the merge of the sorted `a` and `b` to `out`.
fn merge(a: &[Key], b: &[Key], out: &mut Vec<Key>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cpus_read_in_turn_come_out_in_time_order() {
        let mut o = Orderer::new();
        let mut out = Vec::new();
        // Round 1: CPU0 has 10, 30; CPU1 has 20.
        for (t, v) in [(10, "a"), (30, "c"), (20, "b")] {
            o.push(t, v);
        }
        o.end_round(&mut |_, v| out.push(v));
        assert!(out.is_empty(), "nothing is safe after the first round");
        // Round 2: CPU0 has 40; CPU1 has 25 (committed just after round 1 read CPU1).
        o.push(40, "e");
        o.push(25, "d");
        o.end_round(&mut |_, v| out.push(v));
        // Released up to round 1's newest (30): 25 from round 2 comes before 30.
        assert_eq!(out, ["a", "b", "d", "c"]);
        o.push(50, "f");
        o.end_round(&mut |_, v| out.push(v));
        assert_eq!(out, ["a", "b", "d", "c", "e"]);
        o.flush(&mut |_, v| out.push(v));
        assert_eq!(out, ["a", "b", "d", "c", "e", "f"]);
    }

    #[test]
    fn equal_times_keep_arrival_order() {
        let mut o = Orderer::new();
        for v in 0..100 {
            o.push(5, v);
        }
        let mut out = Vec::new();
        o.flush(&mut |_, v| out.push(v));
        assert_eq!(out, (0..100).collect::<Vec<_>>());
    }

    /// The round algorithm as first written (a binary heap of every
    /// record), against which the merge of runs is checked.
    struct Reference {
        heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, u32)>>,
        seq: u64,
        round_max: u64,
        previous_round_max: Option<u64>,
    }

    impl Reference {
        fn push(&mut self, time: u64, value: u32) {
            self.round_max = self.round_max.max(time);
            self.heap.push(std::cmp::Reverse((time, self.seq, value)));
            self.seq += 1;
        }
        fn end_round(&mut self, out: &mut Vec<(u64, u32)>) {
            if let Some(limit) = self.previous_round_max {
                while self.heap.peek().is_some_and(|top| top.0 .0 <= limit) {
                    let std::cmp::Reverse((time, _, value)) = self.heap.pop().unwrap();
                    out.push((time, value));
                }
            }
            self.previous_round_max = Some(self.round_max);
        }
    }

    #[test]
    fn rounds_release_what_the_heap_released_in_the_same_order() {
        // A small LCG: runs, equal times, records late by a little or a lot.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for case in 0..200 {
            let mut o = Orderer::new();
            let mut r = Reference { heap: Default::default(), seq: 0, round_max: 0, previous_round_max: None };
            let (mut got, mut want) = (Vec::new(), Vec::new());
            let mut clock = 0u64;
            let mut value = 0u32;
            for _round in 0..1 + next(8) {
                for _ring in 0..1 + next(4) {
                    // A ring's records: mostly rising, some equal, some late.
                    let mut t = clock.saturating_sub(next(50));
                    for _ in 0..next(if case % 10 == 0 { 2000 } else { 40 }) {
                        t = match next(10) {
                            0 => t,
                            1 => t.saturating_sub(next(30)),
                            _ => t + next(5),
                        };
                        o.push(t, value);
                        r.push(t, value);
                        value += 1;
                    }
                    clock = clock.max(t) + next(3);
                }
                o.end_round(&mut |t, v| got.push((t, v)));
                r.end_round(&mut want);
                assert_eq!(got, want, "case {case}");
                assert_eq!(o.len(), r.heap.len());
            }
            o.flush(&mut |t, v| got.push((t, v)));
            while let Some(std::cmp::Reverse((t, _, v))) = r.heap.pop() {
                want.push((t, v));
            }
            assert_eq!(got, want, "case {case}");
            assert!(o.is_empty());
        }
    }
}

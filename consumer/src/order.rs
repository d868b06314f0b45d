//! Putting records from per-CPU rings into one time order.
//!
//! Each ring is (nearly) in time order, but rings are read one after the
//! other. This is perf's round algorithm (tools/perf/util/session.c,
//! "finished round"): a round reads every ring once; records go into a heap;
//! at the end of a round, records no newer than the newest timestamp of the
//! *previous* round are released. A record that shows up in a later round
//! was written after that earlier round was read, so it cannot be older.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

struct Item<T> {
    time: u64,
    seq: u64,
    value: T,
}

impl<T> PartialEq for Item<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl<T> Eq for Item<T> {}
impl<T> PartialOrd for Item<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Item<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.time, self.seq).cmp(&(other.time, other.seq))
    }
}

/// A time-ordering queue fed in rounds.
pub struct Orderer<T> {
    heap: BinaryHeap<Reverse<Item<T>>>,
    seq: u64,
    round_max: u64,
    previous_round_max: Option<u64>,
    released_through: Option<u64>,
}

impl<T> Default for Orderer<T> {
    fn default() -> Self {
        Orderer { heap: BinaryHeap::new(), seq: 0, round_max: 0, previous_round_max: None, released_through: None }
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
        self.heap.push(Reverse(Item { time, seq: self.seq, value }));
        self.seq += 1;
    }

    /// Ends a round: releases, in time order, everything no newer than the
    /// newest time seen up to the end of the previous round.
    pub fn end_round(&mut self, out: &mut impl FnMut(u64, T)) {
        if let Some(limit) = self.previous_round_max {
            while self.heap.peek().is_some_and(|Reverse(top)| top.time <= limit) {
                if let Some(Reverse(item)) = self.heap.pop() {
                    out(item.time, item.value);
                }
            }
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
        while let Some(Reverse(item)) = self.heap.pop() {
            out(item.time, item.value);
        }
    }

    /// Records queued and not yet released.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
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
}

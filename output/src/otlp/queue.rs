//! The bounded queue between the recorder and the exporter thread.
//!
//! The recorder only ever pushes here (under a mutex the exporter holds
//! for a few instructions, never across a request), so draining the perf
//! rings never waits on the network. Records gather into an open batch,
//! which is sealed when it holds `max_batch_records` or has been open for
//! `max_batch_age`. Sealed batches wait for the exporter; when the queue's
//! memory passes its cap, the oldest batches are dropped and their events
//! counted: under a long outage the newest data is the most useful, and
//! memory stays bounded however long the collector is away.

use std::collections::VecDeque;
use std::mem::size_of;
use std::time::{Duration, Instant};

use crate::record::{Record, Value};

/// How big batches and the queue may grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Records per batch (one request per signal per batch).
    pub max_batch_records: usize,
    /// How long a batch stays open before it is sent anyway.
    pub max_batch_age: Duration,
    /// Bytes of records the queue may hold, open batch included.
    pub memory_cap_bytes: usize,
}

impl Default for QueueLimits {
    fn default() -> QueueLimits {
        QueueLimits { max_batch_records: 4096, max_batch_age: Duration::from_secs(1), memory_cap_bytes: 64 << 20 }
    }
}

/// Records sent together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// In recording order.
    pub records: Vec<Record>,
    /// Their approximate memory, as counted against the cap.
    pub bytes: usize,
    /// How many of them are events (what the summary counts).
    pub events: u64,
}

/// The queue itself; the exporter wraps it in a mutex.
#[derive(Debug)]
pub struct BatchQueue {
    limits: QueueLimits,
    open: Batch,
    opened_at: Option<Instant>,
    sealed: VecDeque<Batch>,
    bytes: usize,
    peak_bytes: usize,
    dropped_events: u64,
    dropped_batches: u64,
}

impl BatchQueue {
    /// An empty queue; a zero limit is taken as 1.
    pub fn new(limits: QueueLimits) -> BatchQueue {
        let limits = QueueLimits { max_batch_records: limits.max_batch_records.max(1), memory_cap_bytes: limits.memory_cap_bytes.max(1), ..limits };
        BatchQueue {
            limits,
            open: Batch::default(),
            opened_at: None,
            sealed: VecDeque::new(),
            bytes: 0,
            peak_bytes: 0,
            dropped_events: 0,
            dropped_batches: 0,
        }
    }

    /// Adds `record` to the open batch, sealing it when full, then drops
    /// the oldest batches while over the cap. Whether the exporter should
    /// look again: a batch was sealed, or one was opened (its due time is
    /// new).
    pub fn push(&mut self, record: Record, now: Instant) -> bool {
        let bytes = approx_bytes(&record);
        let opened = self.opened_at.is_none();
        self.opened_at.get_or_insert(now);
        self.open.events += u64::from(matches!(record, Record::Event(_)));
        self.open.bytes += bytes;
        self.open.records.push(record);
        self.bytes += bytes;
        let full = self.open.records.len() >= self.limits.max_batch_records;
        if full {
            self.seal();
        }
        self.enforce_cap();
        self.peak_bytes = self.peak_bytes.max(self.bytes);
        opened || full
    }

    /// Seals the open batch if it has been open for `max_batch_age`.
    pub fn seal_if_due(&mut self, now: Instant) {
        if self.opened_at.is_some_and(|t| now.duration_since(t) >= self.limits.max_batch_age) {
            self.seal();
        }
    }

    /// When the open batch falls due, if there is one and its due time
    /// is one the clock can hold (a `max_batch_age` of centuries is never).
    pub fn due_at(&self) -> Option<Instant> {
        self.opened_at.and_then(|t| t.checked_add(self.limits.max_batch_age))
    }

    /// Seals the open batch (if it holds anything).
    pub fn seal(&mut self) {
        self.opened_at = None;
        if !self.open.records.is_empty() {
            self.sealed.push_back(std::mem::take(&mut self.open));
        }
    }

    /// The oldest sealed batch, for the exporter; its memory leaves the
    /// queue's account with it.
    pub fn pop(&mut self) -> Option<Batch> {
        let batch = self.sealed.pop_front()?;
        self.bytes -= batch.bytes;
        Some(batch)
    }

    /// Whether `bytes` more fit under the cap. An empty queue takes any
    /// record, so one larger than the cap still gets through.
    pub fn has_room_for(&self, bytes: usize) -> bool {
        self.bytes == 0 || self.bytes.saturating_add(bytes) <= self.limits.memory_cap_bytes
    }

    /// Whether nothing is queued or open.
    pub fn is_empty(&self) -> bool {
        self.sealed.is_empty() && self.open.records.is_empty()
    }

    /// Drops every batch, counting its events, as a shutdown that ran out
    /// of time must.
    pub fn drop_all(&mut self) {
        self.seal();
        while let Some(batch) = self.pop() {
            self.dropped_events += batch.events;
            self.dropped_batches += 1;
        }
    }

    /// Events dropped because the queue was full (or shut down unsent).
    pub fn dropped_events(&self) -> u64 {
        self.dropped_events
    }

    /// Batches dropped.
    pub fn dropped_batches(&self) -> u64 {
        self.dropped_batches
    }

    /// The most memory the queue held.
    pub fn peak_bytes(&self) -> usize {
        self.peak_bytes
    }

    /// The memory it holds now.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn enforce_cap(&mut self) {
        while self.bytes > self.limits.memory_cap_bytes {
            if self.sealed.is_empty() {
                // A cap smaller than one batch: the open batch is the oldest.
                self.seal();
            }
            let Some(oldest) = self.pop() else { break };
            self.dropped_events += oldest.events;
            self.dropped_batches += 1;
        }
    }
}

/// A record's memory: its struct and what its strings and fields own.
/// An estimate (allocator slack is not counted), but one that grows with
/// every byte the record carries, which is what a cap needs.
pub fn approx_bytes(record: &Record) -> usize {
    fn value(v: &Value) -> usize {
        match v {
            Value::Str(s) => s.capacity(),
            Value::Bytes(b) => b.capacity(),
            Value::Array(items) => items.capacity() * size_of::<Value>() + items.iter().map(value).sum::<usize>(),
            Value::Struct(members) => {
                members.capacity() * size_of::<(String, Value)>()
                    + members.iter().map(|(n, v)| n.capacity() + value(v)).sum::<usize>()
            }
            _ => 0,
        }
    }
    size_of::<Record>()
        + match record {
            Record::Event(e) => {
                e.comm.capacity()
                    + e.process.capacity()
                    + e.event.capacity()
                    + e.tracepoint.as_ref().map_or(0, String::capacity)
                    + e.error.as_ref().map_or(0, String::capacity)
                    + e.fields.capacity() * size_of::<(String, Value)>()
                    + e.fields.iter().map(|(n, v)| n.capacity() + value(v)).sum::<usize>()
            }
            Record::Process(p) => {
                p.executable.as_ref().map_or(0, String::capacity)
                    + p.command_line.as_ref().map_or(0, |c| c.iter().map(|a| a.capacity() + size_of::<String>()).sum())
                    + p.container_id.as_ref().map_or(0, String::capacity)
                    + p.resource.iter().map(|(k, v)| k.capacity() + v.capacity() + 3 * size_of::<usize>()).sum::<usize>()
                    + p.pod_uid.as_ref().map_or(0, String::capacity)
            }
            Record::Exit(_) | Record::Lost(_) | Record::Clock(_) => 0,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::event;

    fn e(t: u64) -> Record {
        event(t, 1, 1, "tick", &[("n", Value::Unsigned(t))])
    }

    #[test]
    fn batches_seal_at_their_size_and_age() {
        let t0 = Instant::now();
        let mut q = BatchQueue::new(QueueLimits { max_batch_records: 3, max_batch_age: Duration::from_millis(100), memory_cap_bytes: 1 << 20 });
        assert!(q.push(e(1), t0), "a batch opened");
        assert!(!q.push(e(2), t0), "nothing new for the exporter");
        assert!(q.push(e(3), t0), "a batch sealed");
        assert!(q.push(e(4), t0), "the next opened");
        assert_eq!(q.pop().map(|b| b.events), Some(3));
        assert_eq!(q.pop(), None, "the fourth is still open");
        q.seal_if_due(t0 + Duration::from_millis(99));
        assert_eq!(q.pop(), None);
        assert_eq!(q.due_at(), Some(t0 + Duration::from_millis(100)));
        q.seal_if_due(t0 + Duration::from_millis(100));
        assert_eq!(q.pop().map(|b| b.records), Some(vec![e(4)]));
        assert!(q.is_empty());
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn a_batch_age_beyond_the_clock_is_never_due_and_does_not_overflow() {
        let t0 = Instant::now();
        let mut q = BatchQueue::new(QueueLimits { max_batch_records: 10, max_batch_age: Duration::MAX, memory_cap_bytes: 1 << 20 });
        q.push(e(1), t0);
        assert_eq!(q.due_at(), None);
        q.seal_if_due(t0 + Duration::from_secs(3600));
        assert_eq!(q.pop(), None, "not due");
        q.seal();
        assert_eq!(q.pop().map(|b| b.events), Some(1));
    }

    #[test]
    fn a_full_queue_drops_its_oldest_batches_and_counts_their_events() {
        let one = approx_bytes(&e(0));
        let t0 = Instant::now();
        // Room for 5 records: batches of 2, so the sixth push drops the first batch.
        let mut q = BatchQueue::new(QueueLimits { max_batch_records: 2, max_batch_age: Duration::from_secs(60), memory_cap_bytes: 5 * one });
        for t in 1..=10 {
            q.push(e(t), t0);
            assert!(q.bytes() <= 5 * one, "over the cap after {t}: {}", q.bytes());
        }
        assert_eq!((q.dropped_batches(), q.dropped_events()), (3, 6));
        let left: Vec<u64> = std::iter::from_fn(|| q.pop()).flat_map(|b| b.records).map(|r| r.time_ns()).collect();
        assert_eq!(left, [7, 8, 9, 10], "the newest are kept");
        assert!(q.peak_bytes() <= 5 * one);
    }

    #[test]
    fn memory_is_counted_by_what_records_carry() {
        let small = approx_bytes(&event(1, 1, 1, "a", &[("s", Value::Str("x".into()))]));
        let big = approx_bytes(&event(1, 1, 1, "a", &[("s", Value::Str("x".repeat(10_000)))]));
        assert!(big >= small + 9_999, "{small} {big}");
    }

    #[test]
    fn a_cap_below_one_batch_still_bounds_memory() {
        let one = approx_bytes(&e(0));
        let mut q = BatchQueue::new(QueueLimits { max_batch_records: 100, max_batch_age: Duration::from_secs(60), memory_cap_bytes: 3 * one });
        for t in 1..=10 {
            q.push(e(t), Instant::now());
        }
        assert!(q.peak_bytes() <= 3 * one);
        assert_eq!(q.dropped_events() + std::iter::from_fn(|| q.pop()).map(|b| b.events).sum::<u64>() + q.open.events, 10);
    }
}

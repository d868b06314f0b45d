//! Arbitrary bytes as a perf ring and as single records: finding the
//! published ranges, walking records that may wrap around the end of the
//! ring, and parsing each one must give records or typed errors, never
//! panic.
//!
//! Input: tail (u64 LE), head (u64 LE), then the ring's bytes, cut to a
//! power of two. The whole input is also parsed as one record, both as a
//! session without stacks parses it and as one whose samples carry a
//! callchain before their raw data (`--call-graph fp`), and walked as a
//! round of records back to back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace_consumer::record::{back_to_back, kind, parse, parse_with, Record};
use usertrace_consumer::{published_ranges, Records};

fuzz_target!(|data: &[u8]| {
    if let Ok(record) = parse(data) {
        let _ = record.time();
    }
    if let Ok(Record::Sample { stack, .. }) = parse_with(data, |_| true) {
        let _ = stack.addresses().count();
    }
    // The same bytes as a round: records back to back.
    let mut walk = back_to_back(data);
    for record in walk.by_ref() {
        let _ = (kind(record), parse(record).map(|r| r.time()));
    }
    let _ = walk.rest().len();
    let Some((tail, rest)) = data.split_first_chunk::<8>() else { return };
    let Some((head, ring)) = rest.split_first_chunk::<8>() else { return };
    let (tail, head) = (u64::from_le_bytes(*tail), u64::from_le_bytes(*head));
    // A ring is a power of two bytes; try the input's head-tail distance
    // too, so that small inputs reach the record walk.
    let size = if ring.is_empty() { 0 } else { 1usize << ring.len().ilog2() };
    let ring = &ring[..size];
    for head in [head, tail.wrapping_add(head % (size as u64 + 1))] {
        let Ok((a, b)) = published_ranges(size, tail, head) else { continue };
        let mut scratch = Vec::new();
        for raw in Records::new(&ring[a], &ring[b], tail) {
            let Ok(raw) = raw else { break };
            let _ = raw.is_empty();
            if let Ok(record) = parse(raw.contiguous(&mut scratch)) {
                let _ = record.time();
            }
        }
    }
});

//! A consumer's user-space work per record, natively on the host (no kernel
//! needed), for issue 12 §5: the same 64-byte records `paced_emit` floods
//! the drain benchmark with (one u64 field), already in memory, walked
//! four ways in the same run:
//!
//! - walked and counted, as `ring_drain_baseline` does per record: the
//!   baseline, and the limit for any consumer;
//! - each also parsed as a perf record (`record::parse`);
//! - each also parsed and its payload decoded into named fields
//!   (`decode`), the least `record --format json` does before its
//!   own work (ordering, the thread table, the line);
//! - each also decoded and its JSON line written as `record --format
//!   json` writes it (`usertrace_output::jsonl`, no namespaces) into a
//!   64 KiB buffer, as `record -o FILE` gathers its writes (the `write`
//!   itself is not in it).
//!
//! `cargo bench -p usertrace-consumer --bench per_record`
//!
//! The ways alternate over rounds, and each keeps its best round. The walk
//! is `Records`, the iterator `Ring::drain` runs over the mapped ring; the
//! ring's atomics and page faults, which every consumer pays alike, are
//! not in it.

use std::hint::black_box;
use std::time::Instant;

use usertrace_consumer::record::{parse, Record, PERF_RECORD_LOST, PERF_RECORD_SAMPLE};
use usertrace_consumer::{decode, EventFormat, FieldValue, Records};
use usertrace_output::jsonl::{write_json_line, EventLine, FieldRefs};
use usertrace_output::ValueRef;

const RECORDS: usize = 100_000;
const ROUNDS: usize = 15;

/// The drain benchmark's event as the 6.12 guest describes it.
const FORMAT: &str = "name: bench_flood
ID: 1234
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:u64 n;\toffset:8;\tsize:8;\tsigned:0;

print fmt: \"n=%llu\", REC->n
";

/// One PERF_RECORD_SAMPLE as the session's attrs have the kernel write it:
/// id, pid and tid, time, cpu, then the raw payload, padded to 8 bytes.
fn sample(n: u64) -> Vec<u8> {
    let mut raw = Vec::new();
    raw.extend_from_slice(&1234u16.to_ne_bytes());
    raw.extend_from_slice(&[0, 0]);
    raw.extend_from_slice(&4242i32.to_ne_bytes());
    raw.extend_from_slice(&n.to_ne_bytes());
    let padded = (4 + raw.len()).next_multiple_of(8) - 4;
    let mut body = Vec::new();
    body.extend_from_slice(&7u64.to_ne_bytes());
    body.extend_from_slice(&4242u32.to_ne_bytes());
    body.extend_from_slice(&4242u32.to_ne_bytes());
    body.extend_from_slice(&(1_000_000_000 + n * 500).to_ne_bytes());
    body.extend_from_slice(&((n % 2) as u32).to_ne_bytes());
    body.extend_from_slice(&0u32.to_ne_bytes());
    body.extend_from_slice(&(padded as u32).to_ne_bytes());
    body.extend_from_slice(&raw);
    body.resize(body.len() + padded - raw.len(), 0);
    let mut record = Vec::new();
    record.extend_from_slice(&PERF_RECORD_SAMPLE.to_ne_bytes());
    record.extend_from_slice(&0u16.to_ne_bytes());
    record.extend_from_slice(&((8 + body.len()) as u16).to_ne_bytes());
    record.extend_from_slice(&body);
    record
}

/// Walks `ring` as `Ring::drain` does, calling `per_record` with each
/// record: nanoseconds per record, and the sum of what it returned (so that
/// nothing is optimised away, and the ways can be checked against each other).
fn walk(ring: &[u8], mut per_record: impl FnMut(&[u8]) -> u64) -> (f64, u64) {
    let mut scratch = Vec::new();
    let mut sum = 0u64;
    let start = Instant::now();
    for record in Records::new(black_box(ring), &[], 0) {
        sum += per_record(record.expect("the records are well formed").contiguous(&mut scratch));
    }
    (start.elapsed().as_nanos() as f64 / RECORDS as f64, black_box(sum))
}

/// `ring_drain_baseline`'s closure: the kind, and a LOST record's count.
fn count(bytes: &[u8]) -> u64 {
    let kind = u32::from_ne_bytes(bytes[0..4].try_into().unwrap());
    if kind == PERF_RECORD_SAMPLE {
        1
    } else if kind == PERF_RECORD_LOST && bytes.len() >= 24 {
        u64::from_ne_bytes(bytes[16..24].try_into().unwrap())
    } else {
        0
    }
}

fn parsed(bytes: &[u8]) -> u64 {
    match parse(bytes) {
        Ok(Record::Sample { raw, .. }) => raw.len() as u64,
        _ => 0,
    }
}

fn decoded(bytes: &[u8], format: &EventFormat) -> u64 {
    let Ok(Record::Sample { raw, .. }) = parse(bytes) else { return 0 };
    match decode(format, raw).expect("the payload suits its format").as_slice() {
        [(_, FieldValue::Unsigned(n))] => *n,
        _ => 0,
    }
}

/// Appends the record's line to `out` (emptied when near 64 KiB, as
/// `record -o FILE` hands a full buffer to `write`); its length.
fn line(bytes: &[u8], format: &EventFormat, out: &mut Vec<u8>) -> u64 {
    let Ok(Record::Sample { raw, sample, .. }) = parse(bytes) else { return 0 };
    let fields = decode(format, raw).expect("the payload suits its format");
    // The event's one field; `record` maps every kind alike.
    let values = fields.iter().map(|(name, value)| match value {
        FieldValue::Unsigned(n) => (*name, ValueRef::Unsigned(*n)),
        other => panic!("paced_emit's field is a u64, not {other:?}"),
    });
    let line = EventLine {
        time_ns: sample.time,
        cpu: sample.cpu,
        pid: sample.pid,
        tid: sample.tid,
        comm: "paced_emit",
        process: "paced_emit",
        namespaces: None,
        event: "bench_flood",
        tracepoint: None,
        fields: FieldRefs(values),
        error: None,
        stack: &[],
    };
    if out.len() > 63 * 1024 {
        black_box(&*out);
        out.clear();
    }
    let before = out.len();
    write_json_line(&line, out);
    (out.len() - before) as u64
}

fn main() {
    let format = EventFormat::parse("user_events", FORMAT).expect("the format parses");
    let ring: Vec<u8> = (0..RECORDS as u64).flat_map(sample).collect();
    assert_eq!(ring.len(), RECORDS * 64, "paced_emit's records are 64 bytes");
    let mut out = Vec::with_capacity(64 * 1024);
    let mut best = [f64::INFINITY; 4];
    let mut sums = [0u64; 4];
    for _ in 0..ROUNDS {
        let rounds = [
            walk(&ring, count),
            walk(&ring, parsed),
            walk(&ring, |b| decoded(b, &format)),
            walk(&ring, |b| line(b, &format, &mut out)),
        ];
        for (k, (ns, sum)) in rounds.into_iter().enumerate() {
            best[k] = best[k].min(ns);
            sums[k] = sum;
        }
    }
    // Each way saw every record: a count, the payload bytes, the values,
    // and a line for each (at least the shortest's length).
    let n = RECORDS as u64;
    assert_eq!(sums[..3], [n, n * 20, n * (n - 1) / 2], "a way skipped records");
    assert!(sums[3] >= n * 130, "lines missing: {} bytes for {n} records", sums[3]);
    let base = best[0];
    println!("one 64-byte record (paced_emit's), best of {ROUNDS} rounds of {RECORDS} records:");
    for (label, ns) in [
        "walked and counted (baseline)",
        "+ parsed as a perf record",
        "+ parsed, payload decoded",
        "+ decoded, JSON line written",
    ]
    .iter()
    .zip(best)
    {
        println!("  {label:32} {ns:7.2} ns/record  {:5.2}x the baseline", ns / base);
    }
}

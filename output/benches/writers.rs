//! Writing one recording as JSON lines and as a Perfetto trace, each
//! timed in the same run, with the size of each file. The bar:
//! the .pftrace costs at most 1.5x the JSON lines to write and is at most
//! 0.3x their size.
//!
//! `cargo bench -p usertrace-output --bench writers` (no kernel needed).
//!
//! The recording: 8 processes of 4 threads; each thread serves requests,
//! a span with a path and a size, holding two nested spans (parse with a
//! byte count, query with a row count and a float) and an instant (a log
//! line with a level and a message); every fourth request is handed to
//! another thread and ends there (async); each process reports a GC pause
//! (a completed span) every 50 requests. About 200,000 events.

use std::hint::black_box;
use std::time::{Duration, Instant};

use usertrace_output::{jsonl, perfetto, EventRecord, ExitRecord, Record, Timeline, Value};

const PROCESSES: u32 = 8;
const THREADS: u32 = 4;
const REQUESTS: u64 = 1_000;

fn recording() -> Vec<Record> {
    let mut records = Vec::new();
    let mut t = 1_000_000_000u64;
    let mut ids = vec![0u64; PROCESSES as usize];
    for r in 0..REQUESTS {
        for p in 0..PROCESSES {
            let pid = 1000 + p * 100;
            for k in 0..THREADS {
                let tid = pid + k;
                let event = |t: u64, name: &str, fields: Vec<(&str, Value)>| {
                    Record::Event(EventRecord {
                        time_ns: t,
                        cpu: k,
                        pid,
                        tid,
                        comm: format!("worker-{k}"),
                        process: format!("server-{p}"),
                        namespaces: None,
                        event: name.into(),
                        tracepoint: None,
                        fields: fields.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
                        error: None,
                        stack: Vec::new(),
                    })
                };
                ids[p as usize] += 3;
                let id = ids[p as usize];
                records.push(event(t, "myapp_request", vec![("span_begin", Value::Unsigned(id)), ("path", Value::Str(format!("/api/items/{r}"))), ("size", Value::Unsigned(512 + r))]));
                records.push(event(t + 1_000, "myapp_parse", vec![("span_begin", Value::Unsigned(id + 1)), ("bytes", Value::Unsigned(4096))]));
                records.push(event(t + 21_000, "myapp_parse", vec![("span_end", Value::Unsigned(id + 1))]));
                records.push(event(t + 22_000, "myapp_query", vec![("span_begin", Value::Unsigned(id + 2)), ("table", Value::Str("items".into()))]));
                records.push(event(t + 23_000, "myapp_log", vec![("level", Value::Unsigned(2)), ("message", Value::Str("cache miss, querying".into()))]));
                records.push(event(t + 80_000, "myapp_query", vec![("span_end", Value::Unsigned(id + 2)), ("rows", Value::Unsigned(r % 50)), ("ms", Value::F64(0.058))]));
                let end_tid = if r % 4 == 0 { pid + (k + 1) % THREADS } else { tid };
                let mut end = event(t + 95_000, "myapp_request", vec![("span_end", Value::Unsigned(id)), ("status", Value::Unsigned(200))]);
                if let Record::Event(e) = &mut end {
                    e.tid = end_tid;
                }
                records.push(end);
                t += 1_000;
            }
            if r % 50 == 49 {
                let gc = Record::Event(EventRecord {
                    time_ns: t,
                    cpu: 0,
                    pid,
                    tid: pid,
                    comm: "jvm".into(),
                    process: format!("server-{p}"),
                    namespaces: None,
                    event: "jvm_gc_pause".into(),
                    tracepoint: None,
                    fields: vec![
                        ("span_start_ns".into(), Value::Unsigned(t - 5_000)),
                        ("span_duration_ns".into(), Value::Unsigned(4_000)),
                        ("cause".into(), Value::Str("G1 Evacuation Pause".into())),
                    ],
                    error: None,
                    stack: Vec::new(),
                });
                records.push(gc);
            }
        }
        t += 100_000;
    }
    // The records were made per request; a recording is in time order.
    records.sort_by_key(Record::time_ns);
    for p in 0..PROCESSES {
        records.push(Record::Exit(ExitRecord { time_ns: t, pid: 1000 + p * 100, tid: 1000 + p * 100 }));
    }
    records
}

/// Times `f`, returning the time and what it returned (a size).
fn timed(f: impl FnOnce() -> usize) -> (Duration, usize) {
    let start = Instant::now();
    let size = black_box(f());
    (start.elapsed(), size)
}

fn main() {
    let records = recording();
    let events = records.iter().filter(|r| matches!(r, Record::Event(_))).count();
    let timeline = Timeline::build(&records);
    // Rounds alternate the writers, so load from other jobs on the machine
    // falls on both alike; each figure is its best round.
    const ROUNDS: usize = 7;
    let (mut jsonl_time, mut pftrace_time, mut build_time, mut encode_time) = (Duration::MAX, Duration::MAX, Duration::MAX, Duration::MAX);
    let (mut jsonl_size, mut pftrace_size) = (0, 0);
    for _ in 0..ROUNDS {
        let (t, size) = timed(|| {
            let mut out = Vec::new();
            for r in &records {
                jsonl::write_record(r, &mut out);
            }
            out.len()
        });
        (jsonl_time, jsonl_size) = (jsonl_time.min(t), size);
        // Everything the CLI does at the end of a recording: lay out, encode.
        let (t, size) = timed(|| perfetto::encode(&Timeline::build(&records)).len());
        (pftrace_time, pftrace_size) = (pftrace_time.min(t), size);
        build_time = build_time.min(timed(|| Timeline::build(&records).spans.len()).0);
        encode_time = encode_time.min(timed(|| perfetto::encode(&timeline).len()).0);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("{events} events, best of {ROUNDS} alternating rounds");
    println!("JSON lines   {:>9.1} ms  {:>11} bytes", ms(jsonl_time), jsonl_size);
    println!("Perfetto     {:>9.1} ms  {:>11} bytes", ms(pftrace_time), pftrace_size);
    println!("  of which   {:>9.1} ms laying out the timeline, {:.1} ms encoding", ms(build_time), ms(encode_time));
    println!(
        "ratio .pftrace/JSON lines: time {:.2} (bar 1.5), size {:.3} (bar 0.3)",
        pftrace_time.as_secs_f64() / jsonl_time.as_secs_f64(),
        pftrace_size as f64 / jsonl_size as f64
    );
}

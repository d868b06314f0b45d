//! The live OTLP mapper's CPU time per record as a recording grows: 25k,
//! 50k and 100k span begins that never end, as many spans that do (begin
//! and end), and as many short-lived processes (a process record, a span,
//! its exit), each mapped in batches of 4,096 records as the exporter
//! does, then finished. The bar (issue 22): per-record cost at 100k within
//! 1.3x of that at 25k, for each shape.
//!
//! `cargo bench -p usertrace-output --bench live_mapper` (no kernel, no
//! network: it drives `BatchMapper` directly).
//!
//! CPU time is the thread's own (`/proc/thread-self/schedstat`), so other
//! work on the machine inflates it less than wall time; it falls back to
//! wall time where that file is missing.

use std::hint::black_box;
use std::time::Instant;

use usertrace_output::otlp::live::BatchMapper;
use usertrace_output::otlp::{Clock, ResourceSettings};
use usertrace_output::{EventRecord, ExitRecord, ProcessRecord, Record, Value};

const BATCH: usize = 4096;
const THREADS: u32 = 16;

fn event(t: u64, pid: u32, tid: u32, name: &str, fields: Vec<(String, Value)>) -> Record {
    Record::Event(EventRecord {
        time_ns: t,
        cpu: 0,
        pid,
        tid,
        comm: format!("worker-{}", tid % THREADS),
        process: "server".into(),
        namespaces: None,
        event: name.into(),
        tracepoint: None,
        fields,
        error: None,
        stack: Vec::new(),
    })
}

fn begin(t: u64, pid: u32, tid: u32, id: u64) -> Record {
    event(t, pid, tid, "request", vec![("span_begin".into(), Value::Unsigned(id)), ("path".into(), Value::Str(format!("/api/items/{id}")))])
}

fn end(t: u64, pid: u32, tid: u32, id: u64) -> Record {
    event(t, pid, tid, "request", vec![("span_end".into(), Value::Unsigned(id)), ("status".into(), Value::Unsigned(200))])
}

/// `n` span begins on 16 threads of one process, 1 µs apart, never ended.
fn never_ended(n: u64) -> Vec<Record> {
    (0..n).map(|i| begin(1_000_000 + i * 1_000, 100, 100 + (i % u64::from(THREADS)) as u32, i + 1)).collect()
}

/// `n` spans on 16 threads of one process, each ended 500 ns after it began.
fn closed(n: u64) -> Vec<Record> {
    (0..n)
        .flat_map(|i| {
            let (t, tid) = (1_000_000 + i * 1_000, 100 + (i % u64::from(THREADS)) as u32);
            [begin(t, 100, tid, i + 1), end(t + 500, 100, tid, i + 1)]
        })
        .collect()
}

/// `n` processes, each exec'd, serving one span, and exiting.
fn short_lived(n: u64) -> Vec<Record> {
    (0..n)
        .flat_map(|i| {
            let (t, pid) = (1_000_000 + i * 1_000, 1000 + i as u32);
            [
                Record::Process(ProcessRecord {
                    time_ns: t,
                    pid,
                    executable: Some("/usr/bin/job".into()),
                    command_line: Some(vec!["job".into(), format!("--n={i}")]),
                    container_id: None,
                    resource: Default::default(),
                    pod_uid: None,
                    pid_in_container: None,
                }),
                begin(t + 100, pid, pid, 1),
                end(t + 600, pid, pid, 1),
                Record::Exit(ExitRecord { time_ns: t + 700, pid, tid: pid }),
            ]
        })
        .collect()
}

/// The calling thread's CPU time in ns, or wall time since `start`.
fn cpu_ns(start: Instant) -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| start.elapsed().as_nanos() as u64)
}

/// CPU ns per record to map `records` batch by batch and finish.
fn per_record(records: &[Record]) -> f64 {
    let resource = ResourceSettings { host_name: "bench".into(), ..ResourceSettings::default() };
    let mut mapper = BatchMapper::new(resource, Clock { unix_minus_monotonic_ns: 0 });
    let start = Instant::now();
    let before = cpu_ns(start);
    let mut sent = 0usize;
    for batch in records.chunks(BATCH) {
        let otlp = mapper.map_batch(batch);
        sent += otlp.span_count() + otlp.log_count();
        black_box(&otlp);
    }
    let otlp = mapper.finish();
    sent += otlp.span_count() + otlp.log_count();
    black_box(sent);
    (cpu_ns(start) - before) as f64 / records.len() as f64
}

fn main() {
    type Shape = (&'static str, fn(u64) -> Vec<Record>);
    let shapes: [Shape; 3] = [("never-ended spans", never_ended), ("closed spans", closed), ("short-lived processes", short_lived)];
    println!("{:<24} {:>8} {:>9} {:>11} {:>14}", "shape", "count", "records", "CPU ms", "ns per record");
    for (name, make) in shapes {
        let mut at = Vec::new();
        for n in [25_000u64, 50_000, 100_000] {
            let records = make(n);
            // The best of three runs: the machine is shared.
            let ns = (0..3).map(|_| per_record(&records)).fold(f64::INFINITY, f64::min);
            println!("{name:<24} {n:>8} {:>9} {:>11.1} {ns:>14.0}", records.len(), ns * records.len() as f64 / 1e6);
            at.push(ns);
        }
        println!("{name:<24} per record at 100k / at 25k: {:.2}x (bar: 1.3x)", at[2] / at[0]);
    }
}

//! `report` holds, per span name, the durations of its finished spans (to
//! give exact percentiles), not the spans: a 32 MiB recording of closed,
//! nested spans whose begins and ends carry long fields is reported in
//! under 16 MiB, and the counts are right. Runs on any host.
//!
//! One test in this file: the peak is read with getrusage(RUSAGE_CHILDREN),
//! which covers every child this process has waited for.

use std::fs;
use std::io::{BufWriter, Write};
use std::process::Command;

mod support;
use support::{children_peak_rss, scratch};

const SIZE: usize = 32 << 20;

#[test]
fn a_recording_of_many_closed_spans_with_long_fields_is_reported_in_little_memory() {
    let dir = scratch("report-spans");
    let input = dir.join("spans.jsonl");
    let query = "select * from items where id = ? and owner = ? ".repeat(6);
    let mut requests = 0u64;
    let mut db = Vec::new();
    {
        let mut out = BufWriter::new(fs::File::create(&input).unwrap());
        let mut written = 0;
        let (mut t, mut id) = (1_000u64, 0u64);
        while written < SIZE {
            let tid = 5 + requests % 4;
            let (outer, inner) = (id + 1, id + 2);
            id += 2;
            let common = format!("\"cpu\":0,\"pid\":5,\"tid\":{tid},\"comm\":\"worker\",\"process\":\"app\"");
            let lines = [
                format!("{{\"type\":\"event\",\"time_ns\":{t},{common},\"event\":\"request\",\"fields\":{{\"span_begin\":{outer},\"path\":\"/api/v1/items/{requests}\",\"query\":\"{query}\"}}}}\n"),
                format!("{{\"type\":\"event\",\"time_ns\":{},{common},\"event\":\"db\",\"fields\":{{\"span_begin\":{inner},\"sql\":\"{query}\"}}}}\n", t + 10),
                format!("{{\"type\":\"event\",\"time_ns\":{},{common},\"event\":\"db\",\"fields\":{{\"span_end\":{inner},\"rows\":{requests}}}}}\n", t + 20 + requests % 100),
                format!("{{\"type\":\"event\",\"time_ns\":{},{common},\"event\":\"request\",\"fields\":{{\"span_end\":{outer},\"status\":\"200 OK, {query}\"}}}}\n", t + 200),
            ];
            for line in &lines {
                out.write_all(line.as_bytes()).unwrap();
                written += line.len();
            }
            db.push(10 + requests % 100);
            t += 300;
            requests += 1;
        }
    }
    let o = Command::new(env!("CARGO_BIN_EXE_usertrace")).args(["report", input.to_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains(&format!("span request: {requests} finished; p50 200 ns, p90 200 ns, p99 200 ns, max 200 ns")), "{requests}:\n{text}");
    // Exact percentiles, nearest rank.
    db.sort_unstable();
    let rank = |q: f64| db[((q * db.len() as f64).ceil() as usize).clamp(1, db.len()) - 1];
    let (p50, p90, p99) = (rank(0.5), rank(0.9), rank(0.99));
    assert!(text.contains(&format!("span db: {requests} finished; p50 {p50} ns, p90 {p90} ns, p99 {p99} ns, max 109 ns")), "{requests}:\n{text}");
    let peak = children_peak_rss();
    assert!(peak < (SIZE / 2) as u64, "a peak of {} MiB for a {} MiB file of {requests} requests", peak >> 20, SIZE >> 20);
    fs::remove_dir_all(dir).unwrap();
}

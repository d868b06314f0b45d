//! The cost of one event line as `usertrace record --format json` writes
//! it, natively on the host (no kernel needed): the drain benchmark's event
//! (`paced_emit`: one u64 field), written the three ways a line's
//! `namespaces` can go, in the same run.
//!
//! `cargo bench -p usertrace-output --bench event_line`
//!
//! - without namespaces: a recorder without CAP_PERFMON, the baseline;
//! - namespaces written out on every line, as before `NamespacesJsonCache`;
//! - namespaces copied from `NamespacesJsonCache`, as `record` writes them
//!   now (a root recording's lines all carry them).
//!
//! The three alternate over rounds, and each keeps its best round.

use std::hint::black_box;
use std::time::Instant;

use usertrace_output::jsonl::{write_json_line, EventLine, FieldRefs, NamespacesJsonCache, NamespacesRef};
use usertrace_output::{Namespaces, ValueRef};

const LINES: u32 = 200_000;
const ROUNDS: usize = 15;

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Without,
    WrittenOut,
    Cached,
}

/// Nanoseconds per line over one round, and the last line's length.
fn round(way: Way, namespaces: &Namespaces) -> (f64, usize) {
    let mut kept = NamespacesJsonCache::default();
    let mut out = Vec::with_capacity(64 * 1024);
    let mut len = 0;
    let start = Instant::now();
    for i in 0..LINES {
        out.clear();
        let fields = [("n", ValueRef::Unsigned(u64::from(i) * 7919))];
        let line = EventLine {
            time_ns: 1_000_000_000 + u64::from(i) * 500,
            cpu: i % 2,
            pid: 4242,
            tid: 4242,
            comm: "paced_emit",
            process: "paced_emit",
            namespaces: match way {
                Way::Without => None,
                Way::WrittenOut => Some(NamespacesRef::Values(namespaces)),
                Way::Cached => Some(kept.get(namespaces)),
            },
            event: "bench_flood",
            tracepoint: None,
            fields: FieldRefs(fields.iter().cloned()),
            error: None,
            stack: &[],
        };
        write_json_line(&line, &mut out);
        len = black_box(&out).len();
    }
    (start.elapsed().as_nanos() as f64 / f64::from(LINES), len)
}

fn main() {
    // The inode numbers of a host's initial namespaces.
    let namespaces = Namespaces {
        net: 4026531840,
        uts: 4026531838,
        ipc: 4026531839,
        pid: 4026531836,
        user: 4026531837,
        mnt: 4026531841,
        cgroup: 4026531835,
    };
    let ways = [Way::Without, Way::WrittenOut, Way::Cached];
    let mut best = [(f64::INFINITY, 0usize); 3];
    for _ in 0..ROUNDS {
        for (k, &way) in ways.iter().enumerate() {
            let (ns, len) = round(way, &namespaces);
            if ns < best[k].0 {
                best[k] = (ns, len);
            }
        }
    }
    let base = best[0].0;
    println!("one event line (paced_emit's event), best of {ROUNDS} rounds of {LINES} lines:");
    for (label, (ns, len)) in
        ["without namespaces (baseline)", "namespaces written out (before)", "namespaces from the cache (now)"].iter().zip(best)
    {
        println!("  {label:34} {ns:7.1} ns/line  {len:4} bytes  {:.2}x the baseline", ns / base);
    }
}

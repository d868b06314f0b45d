//! A synthetic recording that exercises every way the timeline places a
//! span, for the tests of the stream and of its writers.

use crate::record::{Record, Value};
use crate::test_records::*;

/// A recording with much of everything, `rounds` times over: nested
/// spans on two threads of three processes, handoffs to another thread,
/// interleaved spans, completed spans, instants of every value type,
/// losses, an exiting thread, and spans left open at the end.
pub(crate) fn busy(rounds: u64) -> Vec<Record> {
    let mut r = vec![process(1, 10, "/usr/bin/server", &["server", "-v"])];
    for n in 0..rounds {
        let t = 100 + n * 100;
        for pid in [10, 20, 30] {
            let (main, worker) = (pid, pid + 1);
            let id = n * 10 + 1;
            r.push(begin(t, pid, main, "request", id));
            r.push(begin(t + 10, pid, main, "parse", id + 1));
            r.push(event(t + 10, pid, main, "at_parse_start", &[("signed", Value::Signed(-(n as i64) - 1)), ("min", Value::Signed(i64::MIN))]));
            r.push(end(t + 20, pid, main, "parse", id + 1));
            r.push(begin(t + 20, pid, main, "next", id + 2));
            r.push(event(t + 30, pid, worker, "note", &[("f", Value::F32(1.1)), ("d", Value::F64(-0.25)), ("b", Value::Bytes(vec![0, 255]))]));
            // Handed off: ends on the worker.
            r.push(begin(t + 30, pid, main, "handoff", id + 3));
            r.push(end(t + 40, pid, main, "next", id + 2));
            r.push(end(t + 50, pid, worker, "handoff", id + 3));
            // Interleaved on the worker.
            r.push(begin(t + 50, pid, worker, "a", id + 4));
            r.push(begin(t + 55, pid, worker, "b", id + 5));
            r.push(end(t + 60, pid, worker, "a", id + 4));
            r.push(end(t + 60, pid, worker, "b", id + 5));
            let gc = [("span_start_ns", Value::Unsigned(t + 45)), ("span_duration_ns", Value::Unsigned(n % 3 * 20)), ("s", Value::Str("héllo".into()))];
            r.push(event(t + 70, pid, worker, "gc", &gc));
            r.push(end(t + 80, pid, main, "request", id));
        }
        if n % 7 == 3 {
            r.push(lost(t + 90, 1, n));
        }
    }
    let t = 200 + rounds * 100;
    r.push(begin(t, 40, 41, "thread_dies", 1));
    r.push(begin(t + 1, 40, 41, "inner", 2));
    r.push(exit(t + 2, 40, 41));
    r.push(begin(t + 3, 40, 40, "left_open", 3));
    r.push(event(t + 4, 40, 40, "last", &[]));
    r
}

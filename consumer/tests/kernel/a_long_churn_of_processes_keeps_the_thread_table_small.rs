//! Recording for hours over short-lived processes must not grow the
//! consumer without bound: exited threads are forgotten once the ordering
//! watermark has passed them. Many processes come and go under one
//! session; the thread table stays the size of what is alive, the
//! recorder's memory stays flat, and every child's event still arrives
//! under the right process.

use std::time::{Duration, Instant};

use usertrace_consumer::{Output, Session};

use crate::consumer_support::*;

/// 20,000 processes by default, about 2 minutes under emulation (132 s on
/// a busy 2-core host). That still judges forgetting: a table that kept
/// every child would grow by 20,000 threads (the bar is 500) and by a few
/// hundred bytes a child (the bar is 64 B; a run measured 52 threads and
/// 2 B). The 100,000 the issue asks for is a soak, and long soaks are
/// benchmarks, not tests: a fork costs 4 to 7 ms, so it took 7 to 8 minutes
/// of every test-all run. harness/bench runs it with USERTRACE_CHURN_COUNT=
/// 100000; any run can set the count, higher or lower.
fn churn_count() -> u32 {
    std::env::var("USERTRACE_CHURN_COUNT").ok().and_then(|n| n.parse().ok()).unwrap_or(20_000)
}

/// The recorder's own heap in memory. Not VmRSS: that also counts the perf
/// ring pages, which fill in as the rings first wrap, whatever the table does.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("RssAnon:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn thousands_of_exited_processes_leave_the_table_and_memory_flat() {
    let name = unique("ut_spawn");
    let count = churn_count();
    let mut producer = start(&["spawn", &name, &count.to_string(), "8"]);
    let mut session = Session::open(&options(&name)).unwrap();
    let baseline_threads = session.stats().threads;

    let hang_guard = Duration::from_millis(15 * u64::from(count)).max(Duration::from_secs(120));
    let start = Instant::now();
    let (mut largest, mut received, mut misnamed) = (0, 0u32, 0u32);
    let mut rss_at_tenth = None;
    let mut seen = vec![false; count as usize];
    let mut take = |outputs: Vec<Output>, received: &mut u32, misnamed: &mut u32| {
        for output in outputs {
            if let Output::Event(event) = output {
                let child = unsigned(&event, "child") as usize;
                assert!(!std::mem::replace(&mut seen[child], true), "child {child} twice");
                *received += 1;
                if &*event.process != "ut_emit" || event.pid == producer.pid {
                    *misnamed += 1;
                }
            }
        }
    };
    loop {
        let outputs = session.poll(Duration::from_millis(50)).unwrap();
        take(outputs, &mut received, &mut misnamed);
        largest = largest.max(session.stats().threads);
        if rss_at_tenth.is_none() && received >= count / 10 {
            rss_at_tenth = Some(rss_kib());
        }
        if let Some(status) = producer.child.try_wait().unwrap() {
            assert!(status.success(), "producer failed: {status}");
            break;
        }
        // A guard against a producer that hangs, not a speed bar, so it
        // scales with the count: 15 ms a process, 2 minutes at least (300 s
        // at 20,000, which took 132 s on a busy host). 100,000 took about
        // 7 minutes alone and over 10 on an emulator whose host was busy
        // (6 ms a process: a flat 600 s failed once).
        assert!(start.elapsed() < hang_guard, "the producer did not finish in {hang_guard:?}");
    }
    take(session.flush(), &mut received, &mut misnamed);
    let stats = session.stats();
    assert_eq!(stats.lost.iter().map(|(_, n)| n).sum::<u64>(), 0, "events were lost: the test cannot judge");
    assert_eq!(received, count, "every child's event arrives");
    assert_eq!(misnamed, 0, "every event is under its child process, named ut_emit");

    // Without forgetting, the table would hold every child: `count` more.
    let grew = largest.saturating_sub(baseline_threads);
    assert!(grew < 500, "the thread table grew by {grew} threads over {count} processes (from {baseline_threads})");
    // A table of every child costs a few hundred bytes each; flat means the
    // last nine tenths added far less than that. Measured from the first
    // tenth (2,000 processes at 20,000), when the table and the session's
    // buffers have reached their working size: 64 B a process still allows
    // only 1.25 MiB of growth, where keeping every child would take several.
    let rss_growth = rss_kib().saturating_sub(rss_at_tenth.unwrap());
    let per_child_bytes = rss_growth * 1024 / u64::from(count);
    // What a soak in harness/bench reports (shown here with --nocapture).
    eprintln!(
        "churn: {count} processes in {:.0?}; table grew by {grew} threads, the recorder by {rss_growth} KiB ({per_child_bytes} B a process)",
        start.elapsed()
    );
    assert!(per_child_bytes < 64, "the recorder grew by {rss_growth} KiB over the last nine tenths ({per_child_bytes} B a process)");
}

//! Issue 12 §1: 64 threads of one process emit at once, each counting its
//! emits in state of its own. Every event either arrives, once, in its
//! thread's order and from that thread, or is counted in a LOST record:
//! received + lost = emitted, exactly. Recorded twice: with the default
//! ring, which under emulation overflows, and with one big enough that it
//! usually does not, so that every event can be checked present.

use std::collections::{BTreeMap, BTreeSet};

use usertrace_consumer::{Output, Session, SessionOptions};

use crate::consumer_support::*;

const THREADS: u64 = 64;
const PER_THREAD: u64 = 1000;

#[test]
fn sixty_four_threads_emitting_at_once_are_all_received_or_counted_lost() {
    for ring_pages in [SessionOptions::default().ring_pages, 4096] {
        let name = unique("threads");
        let mut producer = start(&["threads", &name, &THREADS.to_string(), &PER_THREAD.to_string()]);
        let mut session = Session::open(&SessionOptions { ring_pages, ..options(&name) }).unwrap();
        let rec = record_until_exit(&mut session, &mut producer.child);

        let lost: u64 =
            rec.outputs.iter().map(|o| if let Output::Lost { count, sideband: false, .. } = o { *count } else { 0 }).sum();
        assert_eq!(rec.stats.lost_total(), lost);
        let (received, emitted) = (rec.events.len() as u64, THREADS * PER_THREAD);
        assert_eq!(received + lost, emitted, "{ring_pages} pages: received {received} + lost {lost} != emitted {emitted}");

        // Per thread: no event twice or made up, in order, from one tid.
        let mut numbers: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        let mut tids: BTreeMap<u64, BTreeSet<u32>> = BTreeMap::new();
        for e in &rec.events {
            let (thread, n) = (unsigned(e, "thread"), unsigned(e, "n"));
            assert!(thread < THREADS && n < PER_THREAD, "an event no thread emitted: thread={thread} n={n}");
            assert_eq!(e.pid, producer.pid);
            numbers.entry(thread).or_default().push(n);
            tids.entry(thread).or_default().insert(e.tid);
        }
        for (thread, ns) in &numbers {
            assert!(ns.windows(2).all(|w| w[0] < w[1]), "{ring_pages} pages: thread {thread}'s events repeated or out of order");
        }
        assert!(tids.values().all(|t| t.len() == 1), "{ring_pages} pages: a thread's events came from several tids");
        if lost == 0 {
            assert!(numbers.values().all(|ns| ns.len() as u64 == PER_THREAD) && numbers.len() as u64 == THREADS);
            let distinct: BTreeSet<u32> = tids.values().flatten().copied().collect();
            assert_eq!(distinct.len() as u64, THREADS, "two emitting threads shared a tid");
        }
        eprintln!("{ring_pages} pages per CPU: {received} received + {lost} lost = {emitted} emitted");
    }
}

use super::*;
use crate::record::Record;
use crate::test_records::*;
use crate::timeline::{Item, Timeline, TimelineBuilder, TimelineStream};

const MS: u64 = 1_000_000;

fn summary(records: &[Record], name: &str) -> SchedSummary {
    let t = Timeline::build(records);
    let span = t.spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no span {name}"));
    span.sched.clone().unwrap_or_else(|| panic!("{name} has no summary"))
}

/// Every nanosecond of a span is in exactly one state.
fn assert_accounts_for(s: &SchedSummary, duration_ns: u64) {
    let total = s.on_cpu_ns + s.runnable_ns + s.blocked_ns() + s.unknown_ns;
    assert_eq!(total, duration_ns, "{s:?}");
}

#[test]
fn a_sleeping_span_is_blocked_for_most_of_it_and_on_cpu_for_little() {
    let records = [
        switch(0, 0, R, 10),
        begin(MS, 10, 10, "sleep_span", 1),
        switch(2 * MS, 10, S, 0),
        waking(302 * MS, 0, 0, 10),
        switch(302 * MS + 5_000, 0, R, 10),
        end(303 * MS, 10, 10, "sleep_span", 1),
    ];
    let s = summary(&records, "sleep_span");
    assert_accounts_for(&s, 302 * MS);
    assert_eq!(s.sleeping_ns, 300 * MS);
    assert!(s.blocked_ns() >= 280 * MS && s.on_cpu_ns < 30 * MS, "{s:?}");
    assert_eq!((s.runnable_ns, s.unknown_ns, s.context_switches), (5_000, 0, 1));
    // The waker was an interrupt on the idle CPU: pid 0 is still named.
    assert_eq!(s.top_wakers.len(), 1);
    assert_eq!((s.top_wakers[0].pid, s.top_wakers[0].count), (0, 1));
    assert!(!s.ended_on_another_thread);
}

#[test]
fn a_spinning_span_is_on_cpu_for_all_of_it() {
    let records = [switch(0, 0, R, 10), begin(MS, 10, 10, "spin_span", 1), end(201 * MS, 10, 10, "spin_span", 1)];
    let s = summary(&records, "spin_span");
    assert_eq!((s.on_cpu_ns, s.runnable_ns, s.blocked_ns(), s.unknown_ns, s.context_switches), (200 * MS, 0, 0, 0, 0));
}

#[test]
fn a_contended_span_is_runnable_while_preempted() {
    // A hog (tid 20) and the span's thread take turns on one CPU, 1 ms each.
    let mut records = vec![switch(0, 20, R_PREEMPTED, 10), begin(0, 10, 10, "contended_span", 1)];
    for i in 0..100u64 {
        let t = i * 2 * MS;
        records.push(switch(t + MS, 10, R_PREEMPTED, 20));
        records.push(switch(t + 2 * MS, 20, R_PREEMPTED, 10));
    }
    records.push(end(200 * MS, 10, 10, "contended_span", 1));
    let s = summary(&records, "contended_span");
    assert_accounts_for(&s, 200 * MS);
    assert_eq!((s.on_cpu_ns, s.runnable_ns, s.context_switches), (100 * MS, 100 * MS, 100));
    assert!(s.runnable_ns * 10 >= 3 * 200 * MS);
}

#[test]
fn a_span_woken_through_a_pipe_names_the_writer_by_its_process_name() {
    let mut write = waking(50 * MS, 30, 31, 10);
    if let Record::Event(e) = &mut write {
        e.comm = "writer-main".into();
        e.process = "writer".into();
    }
    let records = [
        switch(0, 0, R, 10),
        begin(MS, 10, 10, "read_pipe", 1),
        switch(2 * MS, 10, S, 0),
        write,
        switch(51 * MS, 0, R, 10),
        end(52 * MS, 10, 10, "read_pipe", 1),
    ];
    let s = summary(&records, "read_pipe");
    let w = &s.top_wakers[0];
    assert_eq!((w.pid, w.tid, w.thread.as_str(), w.process.as_str(), w.count), (30, 31, "writer-main", "writer", 1));
    assert_eq!(w.to_string(), "writer (30) / writer-main (31), 1 time");
}

#[test]
fn top_wakers_are_the_three_that_woke_it_most() {
    let mut records = vec![switch(0, 0, R, 10), begin(1, 10, 10, "woken", 1)];
    let mut t = 10;
    for (waker, times) in [(40, 1), (41, 4), (42, 2), (43, 3)] {
        for _ in 0..times {
            records.push(switch(t, 10, S, 0));
            records.push(waking(t + 1, waker, waker, 10));
            // A second waking of a thread already woken counts nothing.
            records.push(waking(t + 2, 99, 99, 10));
            records.push(switch(t + 3, 0, R, 10));
            t += 10;
        }
    }
    records.push(end(t, 10, 10, "woken", 1));
    let s = summary(&records, "woken");
    let top: Vec<(u32, u64)> = s.top_wakers.iter().map(|w| (w.pid, w.count)).collect();
    assert_eq!(top, [(41, 4), (43, 3), (42, 2)]);
    assert_eq!(s.context_switches, 10);
}

#[test]
fn a_preempted_switch_out_counts_as_runnable_and_d_as_uninterruptible() {
    let records = [
        switch(0, 0, R, 10),
        begin(0, 10, 10, "mixed", 1),
        switch(10, 10, R_PREEMPTED, 20),
        switch(30, 20, R, 10),
        switch(40, 10, R, 20),
        switch(50, 20, R, 10),
        switch(60, 10, D, 0),
        waking(160, 0, 0, 10),
        switch(170, 0, R, 10),
        switch(180, 10, 0x4, 0), // T: stopped
        waking(190, 1, 1, 10),
        switch(200, 0, R, 10),
        end(210, 10, 10, "mixed", 1),
    ];
    let s = summary(&records, "mixed");
    assert_accounts_for(&s, 210);
    assert_eq!(s.runnable_ns, 20 + 10 + 10 + 10);
    assert_eq!(s.uninterruptible_ns, 100);
    assert_eq!(s.other_blocked_ns, 10);
    assert_eq!(s.on_cpu_ns, 10 + 10 + 10 + 10 + 10);
    assert_eq!(s.context_switches, 4);
}

#[test]
fn time_before_the_threads_first_scheduler_record_is_unknown() {
    let records = [
        begin(100, 10, 10, "early", 1),
        switch(1_000, 10, S, 0),
        waking(2_000, 5, 5, 10),
        switch(3_000, 0, R, 10),
        end(4_000, 10, 10, "early", 1),
        // A later span of the same thread is known throughout.
        begin(5_000, 10, 10, "later", 2),
        end(6_000, 10, 10, "later", 2),
    ];
    let s = summary(&records, "early");
    assert_eq!((s.unknown_ns, s.sleeping_ns, s.runnable_ns, s.on_cpu_ns), (900, 1_000, 1_000, 1_000));
    assert_eq!(s.context_switches, 1);
    let later = summary(&records, "later");
    assert_eq!((later.unknown_ns, later.on_cpu_ns), (0, 1_000));
}

#[test]
fn a_span_of_a_thread_without_scheduler_records_has_no_summary() {
    let records = [switch(0, 0, R, 10), begin(10, 20, 21, "elsewhere", 1), end(20, 20, 21, "elsewhere", 1)];
    assert_eq!(Timeline::build(&records).spans[0].sched, None);
    // Nor does any span of a recording without them.
    assert!(Timeline::build(&mixed()).spans.iter().all(|s| s.sched.is_none()));
}

#[test]
fn a_span_ended_on_another_thread_counts_its_begin_thread_until_its_end() {
    let records = [
        switch(0, 0, R, 10),
        begin(10, 1, 10, "handoff", 1),
        switch(20, 10, S, 11),
        // Thread 11 runs the rest; its time is not the span's.
        end(120, 1, 11, "handoff", 1),
    ];
    let t = Timeline::build(&records);
    let s = t.spans[0].sched.as_ref().unwrap();
    assert!(s.ended_on_another_thread);
    assert_eq!((s.tid, s.on_cpu_ns, s.sleeping_ns), (10, 10, 100));
}

#[test]
fn migrations_inside_the_span_are_counted() {
    let records = [switch(0, 0, R, 10), migrate(5, 10), begin(10, 10, 10, "moved", 1), migrate(20, 10), migrate(30, 10), end(40, 10, 10, "moved", 1)];
    assert_eq!(summary(&records, "moved").migrations, 2);
}

#[test]
fn scheduler_records_are_neither_instants_nor_processes_and_their_tasks_are_named_threads() {
    let records =
        [switch(0, 7, R, 10), waking(5, 8, 8, 10), migrate(6, 10), switch(7, 0, R, 10), begin(10, 10, 10, "work", 1), end(20, 10, 10, "work", 1)];
    let t = Timeline::build(&records);
    assert!(t.instants.is_empty());
    assert_eq!(t.processes.keys().copied().collect::<Vec<_>>(), [10]);
    assert_eq!(t.processes[&10].events, 2);
    // The task switched out for it and its waker, which emit nothing, are
    // threads named as they were attributed; not the idle task.
    let threads: Vec<(u32, u32, &str)> = t.threads.values().map(|t| (t.tid, t.pid, t.name.as_str())).collect();
    assert_eq!(threads, [(7, 7, "thread7"), (8, 8, "thread8"), (10, 10, "thread10")]);
}

#[test]
fn a_user_event_named_like_a_scheduler_record_is_an_instant() {
    let records = [
        event(1, 1, 1, "sched_switch", &[("from", Value::Str("a".into())), ("to", Value::Str("b".into()))]),
        // The kernel's field names, but not integers.
        event(2, 1, 1, "sched_waking", &[("pid", Value::Str("x".into())), ("target_cpu", Value::Signed(0))]),
        event(3, 1, 1, "sched_other", &[("pid", Value::Signed(1))]),
    ];
    assert_eq!(Timeline::build(&records).instants.len(), 3);
}

#[test]
fn the_stream_gives_spans_the_summaries_the_built_timeline_does() {
    let records = [
        switch(0, 0, R, 10),
        begin(10, 10, 10, "outer", 1),
        begin(20, 10, 10, "inner", 2),
        switch(30, 10, S, 0),
        waking(40, 3, 3, 10),
        switch(50, 0, R, 10),
        end(60, 10, 10, "inner", 2),
        end(70, 10, 10, "outer", 1),
    ];
    let built = Timeline::build(&records);
    let expected: Vec<Option<SchedSummary>> = built.spans.iter().map(|s| s.sched.clone()).collect();
    // In memory, and through a temporary file per item.
    let dir = std::env::temp_dir().join(format!("usertrace-sched-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for mut stream in [TimelineStream::in_memory(), TimelineStream::with_budget(dir.clone(), 1)] {
        for r in &records {
            stream.push(r).unwrap();
        }
        let streamed: Vec<Option<SchedSummary>> = stream
            .finish()
            .unwrap()
            .filter_map(|i| match i.unwrap() {
                Item::Begin { span, .. } => Some(span.sched),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, expected);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(expected[1].as_ref().unwrap().top_wakers[0].pid, 3);
    // The outer span was woken too, as its thread was.
    assert_eq!(expected[0].as_ref().unwrap().top_wakers[0].count, 1);
}

/// A small deterministic generator, so that a failure can be replayed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn pick<T: Clone>(&mut self, from: &[T]) -> T {
        from[self.next() as usize % from.len()].clone()
    }
}

#[test]
fn odd_and_disordered_scheduler_records_never_panic() {
    let odd = [Value::Signed(-1), Value::Signed(i64::MIN), Value::Signed(i64::MAX), Value::Unsigned(u64::MAX), Value::Signed(10), Value::Signed(11), Value::Signed(0)];
    let names = ["sched_switch", "sched_waking", "sched_migrate_task"];
    let fields = ["prev_pid", "prev_state", "next_pid", "pid", "target_cpu", "orig_cpu", "dest_cpu"];
    for seed in 0..50 {
        let mut rng = Lcg(seed);
        let mut records = Vec::new();
        for _ in 0..200 {
            let t = rng.next() % 1_000 + if rng.next() % 10 == 0 { u64::MAX - 1_000 } else { 0 };
            let tid = rng.pick(&[10, 11, 0, u32::MAX]);
            records.push(match rng.next() % 4 {
                0 => begin(t, 1, tid, "s", rng.next() % 4 + 1),
                1 => end(t, 1, tid, "s", rng.next() % 4 + 1),
                2 => exit(t, 1, tid),
                _ => {
                    let n = rng.next() as usize % fields.len();
                    let f: Vec<(&str, Value)> = (0..=n).map(|i| (fields[(i + n) % fields.len()], rng.pick(&odd))).collect();
                    event(t, 1, tid, rng.pick(&names), &f)
                }
            });
        }
        // Out of order into a builder (which takes them as given), sorted
        // into Timeline::build, and through the stream.
        let mut b = TimelineBuilder::new();
        let mut stream = TimelineStream::in_memory();
        for r in &records {
            b.push(r);
            stream.push(r).unwrap();
        }
        for t in [b.finish(), Timeline::build(&records)] {
            for s in t.spans.iter().filter_map(|s| s.sched.as_ref()) {
                assert!(s.top_wakers.len() <= TOP_WAKERS);
            }
        }
        assert!(stream.finish().unwrap().all(|i| i.is_ok()));
    }
}

#[test]
fn prev_state_reads_only_its_low_byte() {
    use ThreadState::*;
    let cases = [(0, Runnable), (0x100, Runnable), (0x1, Sleeping), (0x2, Uninterruptible), (0x3, Sleeping), (0x80, OtherBlocked), (0x101, Sleeping), (-1, Sleeping), (0x200, Runnable)];
    for (state, expected) in cases {
        assert_eq!(ThreadState::after_switch_out(state), expected, "{state:#x}");
    }
}

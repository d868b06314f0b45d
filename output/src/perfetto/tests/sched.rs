//! Scheduler records in the Perfetto trace: ftrace bundles per CPU, on
//! the trace's clock, joined to the thread tracks by tid.

use super::super::ftrace::{prev_state_for_perfetto, BUNDLE_EVENTS};
use super::super::proto::{ftrace_event, FtraceEventBundle};
use super::*;

/// Every ftrace event of `packets` as `cpu time pid what`, bundle by
/// bundle, and the size of each bundle.
fn ftrace(packets: &[TracePacket]) -> (Vec<String>, Vec<usize>) {
    let mut events = Vec::new();
    let mut sizes = Vec::new();
    for p in packets {
        let Some(trace_packet::Data::FtraceEvents(FtraceEventBundle { cpu, event, .. })) = &p.data else { continue };
        sizes.push(event.len());
        for e in event {
            let what = match e.event.as_ref().expect("an event") {
                ftrace_event::Event::SchedSwitch(s) => format!(
                    "switch {}({}) prio {} state {:#x} -> {}({}) prio {}",
                    s.prev_comm(),
                    s.prev_pid(),
                    s.prev_prio(),
                    s.prev_state(),
                    s.next_comm(),
                    s.next_pid(),
                    s.next_prio()
                ),
                ftrace_event::Event::SchedWaking(w) => format!("waking {}({}) prio {} to cpu {}", w.comm(), w.pid(), w.prio(), w.target_cpu()),
                ftrace_event::Event::SchedMigrateTask(m) => format!("migrate {}({}) cpu {} -> {}", m.comm(), m.pid(), m.orig_cpu(), m.dest_cpu()),
                other => panic!("{other:?}"),
            };
            events.push(format!("cpu {} {} pid {} {what}", cpu.expect("a cpu"), e.timestamp(), e.pid()));
        }
    }
    (events, sizes)
}

#[test]
fn scheduler_records_are_ftrace_events_bundled_per_cpu_in_time_order() {
    let (packets, slices) = decode(&encode(&Timeline::build(&sleeping())));
    assert_eq!(summary(&slices), ["thread 11 thread11 | 0 sleep_span 100..1000 "]);
    let (events, sizes) = ftrace(&packets);
    assert_eq!(
        events,
        [
            "cpu 0 200 pid 11 switch thread11(11) prio 120 state 0x1 -> thread0(0) prio 120",
            "cpu 0 950 pid 0 switch thread0(0) prio 120 state 0x0 -> thread11(11) prio 120",
            "cpu 0 960 pid 11 switch thread11(11) prio 120 state 0x800 -> thread20(20) prio 120",
            "cpu 0 980 pid 20 switch thread20(20) prio 120 state 0x0 -> thread11(11) prio 120",
            "cpu 1 900 pid 12 waking thread11(11) prio 120 to cpu 0",
            "cpu 1 1000 pid 11 migrate thread11(11) cpu 0 -> 1",
        ]
    );
    assert_eq!(sizes, [4, 2], "one bundle per cpu");
}

#[test]
fn the_spans_thread_track_has_the_pid_and_tid_its_states_are_recorded_under() {
    let (packets, _) = decode(&encode(&Timeline::build(&sleeping())));
    let threads: Vec<(i32, i64)> = packets
        .iter()
        .filter_map(|p| match &p.data {
            Some(trace_packet::Data::TrackDescriptor(d)) => d.thread.as_ref().map(|t| (t.pid(), t.tid())),
            _ => None,
        })
        .collect();
    // The span's thread, its waker (which emits nothing) and the thread
    // that preempted it, under their processes; not the idle task.
    assert_eq!(threads, [(10, 11), (10, 12), (20, 20)]);
    let names: Vec<String> = packets
        .iter()
        .filter_map(|p| match &p.data {
            Some(trace_packet::Data::TrackDescriptor(d)) => d.thread.as_ref().map(|t| t.thread_name().to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["thread11", "thread12", "thread20"]);
    let named: std::collections::BTreeSet<i64> = packets
        .iter()
        .filter_map(|p| match &p.data {
            Some(trace_packet::Data::FtraceEvents(b)) => Some(b),
            _ => None,
        })
        .flat_map(|b| &b.event)
        .flat_map(|e| match &e.event {
            Some(ftrace_event::Event::SchedSwitch(s)) => vec![s.prev_pid(), s.next_pid()],
            Some(ftrace_event::Event::SchedWaking(w)) => vec![w.pid()],
            _ => vec![],
        })
        .map(i64::from)
        .collect();
    // The idle task, the span's thread (its track's tid) and the thread
    // that preempted it.
    assert_eq!(named.into_iter().collect::<Vec<_>>(), [0, 11, 20]);
}

#[test]
fn ftrace_times_are_on_the_trace_clock_only_when_there_are_any() {
    let clocks = |records: &[Record]| {
        let (packets, _) = decode(&encode(&Timeline::build(records)));
        let Some(trace_packet::Data::ClockSnapshot(c)) = &packets[0].data else { panic!("the first packet is the clock snapshot") };
        c.clocks.iter().map(|c| (c.clock_id(), c.timestamp())).collect::<Vec<_>>()
    };
    // Perfetto reads ftrace timestamps on BOOTTIME: it reads as MONOTONIC.
    assert_eq!(clocks(&sleeping()), [(CLOCK_MONOTONIC, 1), (CLOCK_BOOTTIME, 1)]);
    assert_eq!(clocks(&mixed()), [(CLOCK_MONOTONIC, 1)]);
}

#[test]
fn a_streamed_trace_has_the_bundles_of_the_built_one() {
    let (built, _) = decode(&encode(&Timeline::build(&sleeping())));
    for budget in [usize::MAX, 0] {
        let (packets, _) = decode(&streamed(&sleeping(), budget));
        assert_eq!(ftrace(&packets), ftrace(&built), "budget {budget}");
        assert_eq!(packets[0], built[0], "the same clock snapshot");
    }
}

#[test]
fn a_busy_cpu_is_written_a_full_bundle_at_a_time() {
    let n = BUNDLE_EVENTS * 2 + 3;
    let records: Vec<Record> = (0..n as u64).map(|i| switch(i, 11, S, 12)).collect();
    let (packets, _) = decode(&encode(&Timeline::build(&records)));
    let (events, sizes) = ftrace(&packets);
    assert_eq!(sizes, [BUNDLE_EVENTS, BUNDLE_EVENTS, 3]);
    let times: Vec<u64> = events.iter().map(|e| e.split(' ').nth(2).unwrap().parse().unwrap()).collect();
    assert_eq!(times, (0..n as u64).collect::<Vec<_>>());
}

#[test]
fn an_event_of_a_cpu_perfetto_refuses_is_left_out() {
    let records = [on_cpu(5000, switch(1, 11, S, 0)), on_cpu(3, switch(2, 11, S, 0))];
    let (packets, _) = decode(&encode(&Timeline::build(&records)));
    let (events, _) = ftrace(&packets);
    assert_eq!(events, ["cpu 3 2 pid 11 switch thread11(11) prio 120 state 0x1 -> thread0(0) prio 120"]);
}

#[test]
fn prev_state_is_written_in_the_layout_perfetto_reads_without_a_kernel_version() {
    // R, S, D, T, t, X, Z keep their bits.
    for low in [0, 0x1, 0x2, 0x4, 0x8, 0x10, 0x20] {
        assert_eq!(prev_state_for_perfetto(low), low);
    }
    assert_eq!(prev_state_for_perfetto(R_PREEMPTED), 0x800, "R+");
    assert_eq!(prev_state_for_perfetto(0x40), 0x200, "P");
    assert_eq!(prev_state_for_perfetto(0x80), 0x402, "I: D and NOLOAD");
    assert_eq!(prev_state_for_perfetto(-1), 0x3f | 0x200 | 0x402 | 0x800, "never panics");
}

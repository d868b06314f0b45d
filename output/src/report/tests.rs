use super::*;
use crate::record::Value;
use crate::test_records::*;
use crate::test_records::named_frame as frame;

/// `n` spans named `name` of the given durations, one after another.
fn spans(name: &str, durations: &[u64]) -> Vec<Record> {
    let mut t = 1_000;
    let mut out = Vec::new();
    for (i, &d) in durations.iter().enumerate() {
        out.push(begin(t, 1, 1, name, i as u64 + 1));
        out.push(end(t + d, 1, 1, name, i as u64 + 1));
        t += d + 1;
    }
    out
}

#[test]
fn percentiles_are_nearest_rank_over_finished_spans() {
    let durations: Vec<u64> = (1..=100).collect();
    let mut records = spans("req", &durations);
    records.push(begin(1_000_000, 1, 1, "req", 999));
    let report = Report::new(&records);
    let s = &report.spans[0];
    assert_eq!((s.count, s.unfinished, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns), (100, 1, 50, 90, 99, 100));
    assert_eq!(report.processes, [ProcessStats { pid: 1, name: "proc1".into(), events: 201, spans: 101 }]);
}

#[test]
fn the_histogram_is_log2_with_empty_ends_trimmed() {
    let report = Report::new(&spans("io", &[1000, 1100, 1500, 4000, 70_000]));
    let buckets: Vec<(u64, u64)> = report.spans[0].histogram.iter().map(|b| (b.from_ns, b.count)).collect();
    assert_eq!(buckets, [(512, 1), (1024, 2), (2048, 1), (4096, 0), (8192, 0), (16384, 0), (32768, 0), (65536, 1)]);
    let text = histogram(&report.spans[0].histogram);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("duration |{} count", "-".repeat(50)));
    assert_eq!(lines[1], format!("  512 ns |{:<50} 1", "@".repeat(25)));
    assert_eq!(lines[2], format!(" 1.02 µs |{} 2", "@".repeat(50)));
    assert_eq!(lines[4], format!(" 4.10 µs |{:<50} 0", ""));
}

#[test]
fn histogram_labels_are_durations_in_the_units_of_the_percentiles() {
    // Every label of the buckets from 0 ns to 2^31 ns, as printed.
    let buckets: Vec<Bucket> = (0..=32).map(|i| Bucket { from_ns: bucket_floor(i), count: 1 }).collect();
    let labels: Vec<String> = histogram(&buckets).lines().skip(1).map(|l| l.split(" |").next().unwrap().to_owned()).collect();
    #[rustfmt::skip]
    let expected = [
        "    0 ns", "    1 ns", "    2 ns", "    4 ns", "    8 ns", "   16 ns", "   32 ns", "   64 ns", "  128 ns", "  256 ns", "  512 ns",
        " 1.02 µs", " 2.05 µs", " 4.10 µs", " 8.19 µs", " 16.4 µs", " 32.8 µs", " 65.5 µs", "  131 µs", "  262 µs", "  524 µs",
        " 1.05 ms", " 2.10 ms", " 4.19 ms", " 8.39 ms", " 16.8 ms", " 33.6 ms", " 67.1 ms", "  134 ms", "  268 ms", "  537 ms",
        " 1.07 s", " 2.15 s",
    ];
    assert_eq!(labels, expected.map(|l| format!("{l:>8}")));
    // Every line has its bar at the same column, though `µ` takes two bytes.
    let bar_columns: Vec<usize> = histogram(&buckets).lines().map(|l| l.chars().position(|c| c == '|').unwrap()).collect();
    assert!(bar_columns.iter().all(|&c| c == 9), "{bar_columns:?}");
}

#[test]
fn rates_are_per_second_of_the_recording() {
    let records = [event(0, 1, 1, "a", &[]), event(500_000_000, 1, 1, "a", &[]), event(2_000_000_000, 2, 2, "b", &[("x", Value::Bool(true))])];
    let report = Report::new(&records);
    let rates: Vec<_> = report.events.iter().map(|e| (e.name.as_str(), e.count, e.rate_per_s)).collect();
    assert_eq!(rates, [("a", 2, Some(1.0)), ("b", 1, Some(0.5))]);
    assert_eq!(report.duration_ns, 2_000_000_000);
    assert_eq!(Report::new(&records[..1]).events[0].rate_per_s, None);
}

#[test]
fn losses_and_orphan_ends_are_counted() {
    let mut records = vec![lost(1, 0, 5), end(2, 1, 1, "x", 3), lost(3, 1, 2)];
    records.push(Record::Lost(crate::record::LostRecord { time_ns: 4, cpu: 0, count: 7, sideband: true }));
    let report = Report::new(&records);
    assert_eq!((report.lost_events, report.lost_task_records, report.orphan_ends), (7, 7, 1));
}

#[test]
fn the_text_names_every_part_and_json_has_every_field() {
    let report = Report::new(&mixed());
    let text = report.to_string();
    for needle in ["recording: 69 ns", "request", "span parse: 1 finished; p50 10 ns", "span work: 0 finished, 1 unfinished", "server", "duration |---", " 8 ns |"] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    let json = serde_json::to_value(&report).unwrap();
    for key in ["duration_ns", "events", "spans", "traces", "processes", "lost_events", "lost_task_records", "orphan_ends"] {
        assert!(json.get(key).is_some(), "{key}");
    }
    assert_eq!((&json["spans"][0]["name"], &json["spans"][0]["histogram"][0]["from_ns"]), (&serde_json::Value::from("gc"), &serde_json::Value::from(2)));
}

#[test]
fn durations_print_in_a_readable_unit() {
    assert_eq!(human(999), "999 ns");
    assert_eq!(human(1_500), "1.50 µs");
    assert_eq!(human(25_000_000), "25.0 ms");
    assert_eq!(human(123_000_000_000), "123 s");
}

#[test]
fn eventheader_events_are_counted_by_provider_and_event_not_by_their_shared_tracepoint() {
    let eh = |t: u64, event: &str| {
        let fields = [("meta.provider", Value::Str("Shop".into())), ("meta.event", Value::Str(event.into()))];
        crate::test_records::event(t, 1, 1, "Shop_L4K1", &fields)
    };
    let report = Report::new(&[eh(0, "Checkout"), eh(1, "Tick"), eh(2, "Tick"), event(3, 1, 1, "plain", &[])]);
    let counts: Vec<_> = report.events.iter().map(|e| (e.name.as_str(), e.count)).collect();
    assert_eq!(counts, [("Shop:Checkout", 1), ("Shop:Tick", 2), ("plain", 1)]);
}

/// `n` spans `name` on thread 10, the i-th on a CPU for i ms, then asleep
/// for 2 ms, then waiting 1 ms for a CPU; and a span `bare` of a thread
/// the scheduler records never name.
fn sched_spans(name: &str, n: u64) -> Vec<Record> {
    const MS: u64 = 1_000_000;
    let mut out = vec![switch(0, 0, R, 10)];
    let mut t = MS;
    for i in 1..=n {
        out.push(begin(t, 10, 10, name, i));
        t += i * MS;
        out.push(switch(t, 10, S, 0));
        t += 2 * MS;
        out.push(waking(t, 30, 31, 10));
        t += MS;
        out.push(switch(t, 0, R, 10));
        out.push(end(t, 10, 10, name, i));
    }
    out.push(begin(t, 20, 20, "bare", 1));
    out.push(end(t + 5, 20, 20, "bare", 1));
    out
}

#[test]
fn spans_with_scheduler_records_get_percentiles_of_on_cpu_runnable_and_blocked_time() {
    let records = sched_spans("req", 10);
    let report = Report::new(&records);
    let req = report.spans.iter().find(|s| s.name == "req").unwrap();
    const MS: u64 = 1_000_000;
    let on_cpu = TimeStats { p50_ns: 5 * MS, p90_ns: 9 * MS, p99_ns: 10 * MS, max_ns: 10 * MS, total_ns: 55 * MS };
    assert_eq!(req.on_cpu, Some(on_cpu));
    assert_eq!(req.blocked, Some(TimeStats { p50_ns: 2 * MS, p90_ns: 2 * MS, p99_ns: 2 * MS, max_ns: 2 * MS, total_ns: 20 * MS }));
    assert_eq!(req.runnable.map(|r| r.total_ns), Some(10 * MS));
    // Durations keep the same rule: on-CPU plus 3 ms each.
    assert_eq!((req.p50_ns, req.p90_ns), (8 * MS, 12 * MS));
    let bare = report.spans.iter().find(|s| s.name == "bare").unwrap();
    assert_eq!((bare.on_cpu, bare.runnable, bare.blocked), (None, None, None));
    // Folded record by record, the same.
    let mut builder = ReportBuilder::new();
    for r in &records {
        builder.push(r);
    }
    assert_eq!(builder.finish(), report);
}

#[test]
fn the_json_of_a_span_with_scheduler_records_has_on_cpu_runnable_and_blocked() {
    let report = Report::new(&sched_spans("req", 3));
    let json = serde_json::to_value(&report).unwrap();
    let spans = json["spans"].as_array().unwrap();
    let (bare, req) = (&spans[0], &spans[1]);
    assert_eq!((&bare["name"], &req["name"]), (&serde_json::Value::from("bare"), &serde_json::Value::from("req")));
    for key in ["on_cpu", "runnable", "blocked"] {
        let keys: Vec<&str> = req[key].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["max_ns", "p50_ns", "p90_ns", "p99_ns", "total_ns"], "{key}");
        assert!(bare.get(key).is_none(), "{key}");
    }
    assert_eq!(req["on_cpu"]["total_ns"], serde_json::Value::from(6_000_000));
    let waker = serde_json::json!({"pid": 30, "tid": 31, "thread": "thread31", "process": "proc30", "count": 3});
    assert_eq!(req["top_wakers"], serde_json::json!([waker]));
    assert!(bare.get("top_wakers").is_none());
    // Nor has a recording without them.
    let plain = serde_json::to_value(Report::new(&mixed())).unwrap();
    assert!(plain["spans"].as_array().unwrap().iter().all(|s| s.get("on_cpu").is_none()));
}

#[test]
fn the_text_gives_on_cpu_runnable_and_blocked_under_the_durations() {
    let text = Report::new(&sched_spans("req", 3)).to_string();
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("span req")).take(5).collect();
    assert_eq!(lines[0], "span req: 3 finished; p50 5.00 ms, p90 6.00 ms, p99 6.00 ms, max 6.00 ms");
    assert_eq!(lines[1], "  on-CPU    p50 2.00 ms, p90 3.00 ms, p99 3.00 ms, max 3.00 ms, total 6.00 ms");
    assert_eq!(lines[2], "  runnable  p50 1.00 ms, p90 1.00 ms, p99 1.00 ms, max 1.00 ms, total 3.00 ms");
    assert_eq!(lines[3], "  blocked   p50 2.00 ms, p90 2.00 ms, p99 2.00 ms, max 2.00 ms, total 6.00 ms");
    assert_eq!(lines[4], "  woken by  proc30 (30) / thread31 (31), 3 times");
    assert!(!Report::new(&mixed()).to_string().contains("on-CPU"));
}


/// Three spans `req`, two begun from `handle` (in two processes of the
/// same program, loaded at different addresses), one from `retry` and
/// left unfinished; and a span `plain` whose begin has no stack.
fn spans_with_stacks() -> Vec<Record> {
    let handle = |base: u64| vec![frame(base + 0x1000, "handle", 12), crate::record::StackFrame { address: base + 0x1800, module: Some("/usr/bin/app".into()), module_offset: Some(0x1800), ..Default::default() }, frame(base + 0x2000, "main", 40)];
    let retry = vec![frame(0x40_3000, "retry", 7), frame(0x40_2000, "main", 41)];
    vec![
        with_stack(begin(10, 1, 1, "req", 1), handle(0x40_0000)),
        end(20, 1, 1, "req", 1),
        with_stack(begin(30, 2, 2, "req", 1), handle(0x55_0000)),
        end(40, 2, 2, "req", 1),
        with_stack(begin(50, 1, 1, "req", 2), retry),
        begin(60, 1, 1, "plain", 3),
        end(70, 1, 1, "plain", 3),
    ]
}

#[test]
fn the_text_lists_each_span_names_begin_stacks_most_frequent_first() {
    let text = Report::new(&spans_with_stacks()).to_string();
    let req: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("span req")).skip_while(|l| !l.starts_with("  began at")).take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        req,
        [
            "  began at (innermost frame first)",
            "    2 of 3 begins:",
            "      handle (app.c:12)",
            "      /usr/bin/app+0x1800",
            "      main (app.c:40)",
            "    1 of 3 begins:",
            "      retry (app.c:7)",
            "      main (app.c:41)",
        ]
    );
    let plain: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("span plain")).take_while(|l| !l.starts_with("span req")).collect();
    assert!(!plain.iter().any(|l| l.contains("began at")), "{plain:?}");
}

#[test]
fn the_json_of_a_span_with_begin_stacks_has_them_and_of_one_without_none() {
    let records = spans_with_stacks();
    let report = Report::new(&records);
    let json = serde_json::to_value(&report).unwrap();
    let (plain, req) = (&json["spans"][0], &json["spans"][1]);
    assert!(plain.get("begin_stacks").is_none() && plain.get("begins_from_other_stacks").is_none(), "{plain}");
    let expected = serde_json::json!([
        {"count": 2, "frames": [
            {"function": "handle", "file": "app.c", "line": 12, "module": "/usr/bin/app"},
            {"module": "/usr/bin/app", "offset": 0x1800},
            {"function": "main", "file": "app.c", "line": 40, "module": "/usr/bin/app"},
        ]},
        {"count": 1, "frames": [
            {"function": "retry", "file": "app.c", "line": 7, "module": "/usr/bin/app"},
            {"function": "main", "file": "app.c", "line": 41, "module": "/usr/bin/app"},
        ]},
    ]);
    assert_eq!(req["begin_stacks"], expected);
    assert_eq!(req["begins_from_other_stacks"], serde_json::Value::from(0));
    // Folded record by record, the same: the open span keeps its stack.
    let mut builder = ReportBuilder::new();
    records.iter().for_each(|r| builder.push(r));
    assert_eq!(builder.finish(), report);
}

#[test]
fn past_the_cap_of_distinct_stacks_begins_are_counted_as_other() {
    let distinct = stacks::MAX_DISTINCT_STACKS as u64 + 5;
    let mut records = Vec::new();
    // Stack 0 begins three times, stack 1 twice, every other once; the
    // five met after the cap are counted, not kept.
    let firsts = (0..distinct).chain([0, 0, 1]);
    for (i, s) in firsts.enumerate() {
        let id = i as u64 + 1;
        let t = 10 * id;
        records.push(with_stack(begin(t, 1, 1, "req", id), vec![frame(0x40_1000 + s, "leaf", s as u32), frame(0x40_2000, "main", 1)]));
        records.push(end(t + 5, 1, 1, "req", id));
    }
    let report = Report::new(&records);
    let req = &report.spans[0];
    let counts: Vec<(u64, Option<u32>)> = req.begin_stacks.iter().map(|s| (s.count, s.frames[0].line)).collect();
    assert_eq!(counts, [(3, Some(0)), (2, Some(1)), (1, Some(2))]);
    // 40 begins: 6 listed, 29 of the other kept stacks, 5 past the cap.
    assert_eq!(req.begins_from_other_stacks, Some(distinct + 3 - 6));
    let text = report.to_string();
    assert!(text.lines().any(|l| l == "    34 of 40 begins from other stacks"), "{text}");
}

#[test]
fn a_deep_stack_prints_its_innermost_frames_and_counts_the_rest() {
    let deep: Vec<_> = (0..FRAMES_SHOWN as u64 + 3).map(|i| frame(0x40_1000 + i, &format!("f{i}"), i as u32)).collect();
    let records = [with_stack(begin(1, 1, 1, "req", 1), deep), end(2, 1, 1, "req", 1)];
    let text = Report::new(&records).to_string();
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("    1 of 1 begins:")).skip(1).collect();
    assert_eq!(lines[0], "      f0 (app.c:0)");
    assert_eq!(lines[FRAMES_SHOWN - 1], "      f7 (app.c:7)");
    assert_eq!(lines[FRAMES_SHOWN], "      ... 3 more frames");
    assert_eq!(Report::new(&records).spans[0].begin_stacks[0].frames.len(), FRAMES_SHOWN + 3);
}

#[test]
fn the_text_leaves_out_usertraces_own_frames_and_starts_at_its_caller() {
    let named = |function: &str| crate::record::StackFrame { function: Some(function.into()), ..Default::default() };
    let stack = vec![
        named("writev"),
        named("usertrace::producer::payload::write_event"),
        named("<usertrace::producer::span::Span as core::ops::Drop>::drop"),
        named("usertrace_span_begin"),
        named("handle"),
        named("usertrace_not_called_here"),
        named("main"),
    ];
    let records = [with_stack(begin(1, 1, 1, "req", 1), stack), end(2, 1, 1, "req", 1)];
    let text = Report::new(&records).to_string();
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("    1 of 1 begins:")).skip(1).take_while(|l| !l.is_empty()).collect();
    assert_eq!(lines, ["      ... 4 frames in usertrace", "      handle", "      usertrace_not_called_here", "      main"]);
    // A stack whose innermost frames are not usertrace's keeps them all.
    let theirs = vec![named("writev"), named("a"), named("b"), named("usertrace::x")];
    let frames = Report::new(&[with_stack(begin(1, 1, 1, "req", 1), theirs)]).spans[0].begin_stacks[0].frames.clone();
    assert_eq!(stacks::emit_frames(&frames), 0);
}

/// Requests that cross two processes: `front` (pid 1, service
/// `checkout`) begins each trace with a root span, `worker` (pid 2)
/// continues it under a remote parent. Durations 100, 200, ... 1000 ns.
fn two_process_requests() -> Vec<Record> {
    let mut records = vec![process(0, 1, "/usr/bin/front", &["front"]), process(0, 2, "/usr/bin/worker", &["worker"])];
    if let Record::Process(p) = &mut records[0] {
        p.resource.insert("service.name".into(), "checkout".into());
    }
    let mut t = 1_000;
    for i in 1..=10u64 {
        let trace = 0xabc0_0000_0000_0000_0000_0000_0000_0000 | u128::from(i);
        let d = 100 * i;
        records.push(traced_begin(t, 1, 1, "request", i, (trace, 0), &[]));
        records.push(traced_begin(t + 10, 2, 2, "lookup", 100 + i, (trace, i), &[]));
        records.push(end(t + 20, 2, 2, "lookup", 100 + i));
        records.push(end(t + d, 1, 1, "request", i));
        t += d + 1;
    }
    records.push(traced_begin(t, 1, 1, "request", 11, (0xabc, 0), &[]));
    records
}

#[test]
fn requests_are_counted_once_per_trace_by_their_root_span_and_its_service() {
    let report = Report::new(&two_process_requests());
    // The worker's spans have a parent: they are part of a request, not one.
    assert_eq!(report.traces.len(), 1, "{:?}", report.traces);
    let t = &report.traces[0];
    assert_eq!((t.root.as_str(), t.process.as_str(), t.count, t.unfinished), ("request", "checkout (front)", 10, 1));
    let d = t.duration.expect("finished roots");
    assert_eq!((d.p50_ns, d.p90_ns, d.p99_ns, d.max_ns), (500, 900, 1000, 1000));
    let text = report.to_string();
    let line = "  request in checkout (front): 10 finished, 1 unfinished; p50 500 ns, p90 900 ns, p99 1.00 µs, max 1.00 µs";
    assert!(text.contains("requests (traces, by their root span):\n") && text.contains(line), "{text}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["traces"][0]["duration"]["p99_ns"], 1000);
}

#[test]
fn spans_without_trace_context_make_no_requests() {
    let report = Report::new(&spans("req", &[1, 2, 3]));
    assert!(report.traces.is_empty());
    assert!(!report.to_string().contains("requests"));
}

#[test]
fn a_report_folded_record_by_record_counts_the_same_requests() {
    let records = two_process_requests();
    let mut builder = ReportBuilder::new();
    for r in &records {
        builder.push(r);
    }
    assert_eq!(builder.finish().traces, Report::new(&records).traces);
}

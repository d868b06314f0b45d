use super::*;
use crate::test_records::*;

fn span<'a>(t: &'a Timeline, name: &str) -> &'a Span {
    t.spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no span {name}: {:#?}", t.spans))
}

fn arg<'a>(s: &'a Span, name: &str) -> Option<&'a Value> {
    s.args.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

#[test]
fn nested_begins_and_ends_on_one_thread_are_thread_slices_with_depths() {
    let t = Timeline::build(&[
        begin(10, 1, 1, "outer", 1),
        begin(20, 1, 1, "inner", 2),
        begin(25, 1, 1, "innermost", 3),
        end(26, 1, 1, "innermost", 3),
        end(30, 1, 1, "inner", 2),
        begin(30, 1, 1, "sibling", 4),
        end(40, 1, 1, "sibling", 4),
        end(50, 1, 1, "outer", 1),
    ]);
    let got: Vec<_> = t.spans.iter().map(|s| (s.name.as_str(), s.start_ns, s.end_ns, s.placement)).collect();
    assert_eq!(
        got,
        [
            ("outer", 10, 50, Placement::Thread { depth: 0 }),
            ("inner", 20, 30, Placement::Thread { depth: 1 }),
            ("innermost", 25, 26, Placement::Thread { depth: 2 }),
            ("sibling", 30, 40, Placement::Thread { depth: 1 }),
        ]
    );
    assert!(t.instants.is_empty());
    assert_eq!((t.start_ns, t.end_ns, t.orphan_ends), (10, 50, 0));
}

#[test]
fn span_args_are_the_begins_other_fields_then_the_ends() {
    let t = Timeline::build(&[
        event(1, 1, 1, "req", &[("span_begin", Value::Unsigned(9)), ("path", Value::Str("/".into())), ("n", Value::Signed(-1))]),
        event(2, 1, 1, "req_done", &[("span_end", Value::Unsigned(9)), ("error", Value::Str("timeout".into()))]),
    ]);
    let s = span(&t, "req");
    assert_eq!(
        s.args,
        [("path".into(), Value::Str("/".into())), ("n".into(), Value::Signed(-1)), ("error".into(), Value::Str("timeout".into()))]
    );
    assert_eq!((s.id, s.unfinished), (Some(9), None));
}

#[test]
fn a_begins_trace_context_is_the_spans_trace_not_among_its_args() {
    let trace_id = 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736;
    let t = Timeline::build(&[
        traced_begin(1, 1, 1, "req", 0xabcd, (trace_id, 0x00f0_67aa_0ba9_02b7), &[("path", Value::Str("/".into()))]),
        end(2, 1, 1, "req", 0xabcd),
    ]);
    let s = span(&t, "req");
    assert_eq!(s.trace, Some(SpanTrace { trace_id, parent_span_id: 0x00f0_67aa_0ba9_02b7 }));
    assert!(s.trace.unwrap().is_said());
    assert_eq!(s.args, [("path".into(), Value::Str("/".into()))]);
    assert_eq!(s.id, Some(0xabcd));
}

#[test]
fn a_begin_without_trace_fields_has_no_trace_and_keeps_fields_named_alike_as_args() {
    // Written before spans carried a trace context: read as always.
    let t = Timeline::build(&[
        event(1, 1, 1, "old", &[("span_begin", Value::Unsigned(7)), ("parent_span_id", Value::Unsigned(3))]),
        end(2, 1, 1, "old", 7),
        traced_begin(3, 1, 1, "unsaid", 8, (0, 0), &[]),
        end(4, 1, 1, "unsaid", 8),
    ]);
    let old = span(&t, "old");
    assert_eq!(old.trace, None);
    assert_eq!(old.args, [("parent_span_id".into(), Value::Unsigned(3))], "not in the convention's place: a field of its own");
    let unsaid = span(&t, "unsaid");
    assert_eq!(unsaid.trace, Some(SpanTrace { trace_id: 0, parent_span_id: 0 }));
    assert!(!unsaid.trace.unwrap().is_said());
    assert!(unsaid.args.is_empty());
}

#[test]
fn a_span_ended_on_another_thread_goes_to_an_async_track() {
    let t = Timeline::build(&[begin(10, 1, 1, "handoff", 5), end(20, 1, 2, "handoff", 5)]);
    let s = span(&t, "handoff");
    assert_eq!((s.placement, s.pid, s.tid, s.start_ns, s.end_ns), (Placement::Async { lane: 0 }, 1, 1, 10, 20));
    assert_eq!(t.async_spans(1).count(), 1);
    assert_eq!(t.thread_spans(1).count(), 0);
}

#[test]
fn interleaved_spans_on_one_thread_send_the_outer_one_async() {
    let t = Timeline::build(&[begin(10, 1, 1, "a", 1), begin(20, 1, 1, "b", 2), end(30, 1, 1, "a", 1), end(40, 1, 1, "b", 2)]);
    assert_eq!(span(&t, "a").placement, Placement::Async { lane: 0 });
    assert_eq!(span(&t, "b").placement, Placement::Thread { depth: 0 });
}

#[test]
fn a_child_of_a_span_that_went_async_is_at_depth_zero() {
    let t = Timeline::build(&[begin(10, 1, 1, "a", 1), begin(20, 1, 1, "b", 2), end(30, 1, 1, "b", 2), end(40, 1, 2, "a", 1)]);
    assert_eq!(span(&t, "a").placement, Placement::Async { lane: 0 });
    assert_eq!(span(&t, "b").placement, Placement::Thread { depth: 0 });
}

#[test]
fn same_ids_in_different_processes_are_different_spans() {
    let t = Timeline::build(&[begin(10, 1, 1, "p1", 1), begin(11, 2, 2, "p2", 1), end(20, 2, 2, "p2", 1), end(30, 1, 1, "p1", 1)]);
    assert_eq!((span(&t, "p1").start_ns, span(&t, "p1").end_ns), (10, 30));
    assert_eq!((span(&t, "p2").start_ns, span(&t, "p2").end_ns), (11, 20));
    assert!(t.spans.iter().all(|s| s.placement == Placement::Thread { depth: 0 }));
}

#[test]
fn a_completed_span_is_async_with_its_own_times_and_args() {
    let t = Timeline::build(&[event(
        100,
        1,
        3,
        "gc_pause",
        &[("span_start_ns", Value::Unsigned(40)), ("span_duration_ns", Value::Unsigned(25)), ("cause", Value::Str("alloc".into()))],
    )]);
    let s = span(&t, "gc_pause");
    assert_eq!((s.start_ns, s.end_ns, s.placement, s.id), (40, 65, Placement::Async { lane: 0 }, None));
    assert_eq!(s.args, [("cause".into(), Value::Str("alloc".into()))]);
}

#[test]
fn overlapping_async_spans_take_separate_lanes() {
    let t = Timeline::build(&[
        begin(10, 1, 1, "x", 1),
        begin(12, 1, 2, "y", 2),
        end(20, 1, 2, "x", 1),
        end(22, 1, 1, "y", 2),
        begin(25, 1, 1, "z", 3),
        end(26, 1, 2, "z", 3),
    ]);
    assert_eq!(span(&t, "x").placement, Placement::Async { lane: 0 });
    assert_eq!(span(&t, "y").placement, Placement::Async { lane: 1 });
    assert_eq!(span(&t, "z").placement, Placement::Async { lane: 0 });
}

#[test]
fn open_spans_are_closed_at_exits_and_at_the_end_with_the_reason() {
    let t = Timeline::build(&[
        begin(10, 1, 2, "on_thread", 1),
        begin(11, 1, 1, "on_main", 2),
        begin(12, 1, 1, "inner_main", 3),
        begin(13, 5, 5, "still_open", 1),
        exit(20, 1, 2),
        event(25, 5, 5, "tick", &[]),
        exit(30, 1, 1),
        event(40, 5, 5, "last", &[]),
    ]);
    let closed = |name: &str| {
        let s = span(&t, name);
        (s.end_ns, arg(s, UNFINISHED).cloned(), s.placement)
    };
    assert_eq!(closed("on_thread"), (20, Some(Value::Str("thread exited".into())), Placement::Thread { depth: 0 }));
    assert_eq!(closed("on_main"), (30, Some(Value::Str("process exited".into())), Placement::Thread { depth: 0 }));
    assert_eq!(closed("inner_main"), (30, Some(Value::Str("process exited".into())), Placement::Thread { depth: 1 }));
    assert_eq!(closed("still_open"), (40, Some(Value::Str("recording ended".into())), Placement::Thread { depth: 0 }));
    assert_eq!(span(&t, "still_open").unfinished, Some("recording ended"));
}

#[test]
fn an_end_without_its_begin_is_counted_and_shown_as_an_instant() {
    let t = Timeline::build(&[end(10, 1, 1, "late", 4)]);
    assert_eq!(t.orphan_ends, 1);
    assert!(t.spans.is_empty());
    assert_eq!(t.instants[0].name, "late");
    assert_eq!(t.instants[0].args, [("span_end".into(), Value::Unsigned(4))]);
}

#[test]
fn a_zero_or_non_integer_span_id_is_an_ordinary_instant() {
    let t = Timeline::build(&[
        event(1, 1, 1, "zero", &[("span_begin", Value::Unsigned(0))]),
        event(2, 1, 1, "text", &[("span_begin", Value::Str("7".into()))]),
        event(3, 1, 1, "second", &[("x", Value::Unsigned(1)), ("span_begin", Value::Unsigned(8))]),
    ]);
    assert!(t.spans.is_empty());
    assert_eq!(t.instants.len(), 3);
    assert_eq!(t.orphan_ends, 0);
}

#[test]
fn other_events_are_instants_with_typed_args_and_decode_errors() {
    let mut records = vec![event(5, 1, 2, "hit", &[("n", Value::Unsigned(3)), ("ok", Value::Bool(false))])];
    if let Record::Event(e) = &mut records[0] {
        e.error = Some("payload too short".into());
    }
    let t = Timeline::build(&records);
    let i = &t.instants[0];
    assert_eq!((i.time_ns, i.pid, i.tid, i.name.as_str()), (5, 1, 2, "hit"));
    assert_eq!(
        i.args,
        [("n".into(), Value::Unsigned(3)), ("ok".into(), Value::Bool(false)), ("error".into(), Value::Str("payload too short".into()))]
    );
}

#[test]
fn lost_records_become_named_markers() {
    let mut records = vec![lost(7, 3, 12)];
    records.push(Record::Lost(crate::record::LostRecord { time_ns: 8, cpu: 0, count: 2, sideband: true }));
    let t = Timeline::build(&records);
    let names: Vec<_> = t.lost.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["lost 12 events on cpu 3", "lost 2 task records on cpu 0"]);
}

#[test]
fn processes_are_named_by_executable_then_by_their_events() {
    let t = Timeline::build(&[
        process(1, 10, "/usr/bin/server", &["server", "-v"]),
        event(2, 10, 11, "a", &[]),
        event(3, 20, 20, "b", &[]),
        // Seen, but emitted nothing: not in the timeline.
        process(4, 30, "/bin/idle", &["idle"]),
    ]);
    let p = &t.processes[&10];
    assert_eq!((p.name.as_str(), p.executable.as_deref(), p.events), ("server", Some("/usr/bin/server"), 1));
    assert_eq!(p.command_line.as_deref(), Some(&["server".to_owned(), "-v".to_owned()][..]));
    assert_eq!(t.processes[&20].name, "proc20");
    assert!(!t.processes.contains_key(&30));
    assert_eq!((t.threads[&11].pid, t.threads[&11].name.as_str()), (10, "thread11"));
}

#[test]
fn across_exec_a_process_keeps_its_spans_and_takes_the_new_name() {
    let t = Timeline::build(&[
        event(1, 10, 10, "before", &[]),
        begin(2, 10, 10, "across", 1),
        process(3, 10, "/usr/bin/python3", &["python3", "app.py"]),
        end(4, 10, 10, "across", 1),
    ]);
    assert_eq!(t.processes[&10].name, "python3");
    assert_eq!(span(&t, "across").unfinished, None);
}

#[test]
fn records_out_of_order_are_sorted_first() {
    let t = Timeline::build(&[end(20, 1, 1, "s", 1), begin(10, 1, 1, "s", 1)]);
    assert_eq!((span(&t, "s").start_ns, span(&t, "s").end_ns, t.orphan_ends), (10, 20, 0));
}

#[test]
fn the_mixed_recording_lays_out_as_expected() {
    let t = Timeline::build(&mixed());
    let got: Vec<_> = t.spans.iter().map(|s| (s.name.as_str(), s.start_ns, s.end_ns, s.placement, s.unfinished)).collect();
    assert_eq!(
        got,
        [
            ("request", 10, 60, Placement::Thread { depth: 0 }, None),
            ("parse", 20, 30, Placement::Thread { depth: 1 }, None),
            ("handoff", 40, 50, Placement::Async { lane: 0 }, None),
            ("gc", 41, 44, Placement::Async { lane: 1 }, None),
            ("work", 63, 70, Placement::Thread { depth: 0 }, Some("process exited")),
        ]
    );
    assert_eq!(t.processes[&10].name, "server");
}

/// An EventHeader event as the consumer decodes it: its own fields, then
/// `meta.provider` and `meta.event`.
fn eventheader(t: u64, first: &[(&str, Value)], event: &str) -> Record {
    let mut fields = first.to_vec();
    fields.push(("meta.provider", Value::Str("Shop".into())));
    fields.push(("meta.event", Value::Str(event.into())));
    crate::test_records::event(t, 1, 1, "Shop_L4K1", &fields)
}

#[test]
fn eventheader_events_are_named_provider_colon_event_not_by_their_shared_tracepoint() {
    let t = Timeline::build(&[
        eventheader(10, &[("span_begin", Value::Unsigned(5))], "Work"),
        eventheader(15, &[("n", Value::Unsigned(1))], "Tick"),
        eventheader(20, &[("span_end", Value::Unsigned(5))], "Work"),
    ]);
    let got: Vec<_> = t.spans.iter().map(|s| (s.name.as_str(), s.start_ns, s.end_ns)).collect();
    assert_eq!(got, [("Shop:Work", 10, 20)]);
    assert_eq!(t.instants.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["Shop:Tick"]);
}

/// A span as OpenTelemetry's user_events trace exporter writes it, at the
/// time its end was stamped.
fn otel_span(t: u64, name: &str, start: &str, end: &str) -> Record {
    eventheader(
        t,
        &[
            ("PartA.time", Value::Str(end.into())),
            ("PartB._typeName", Value::Str("Span".into())),
            ("PartB.name", Value::Str(name.into())),
            ("PartB.startTime", Value::Str(start.into())),
            ("PartC.user_id", Value::Signed(42)),
        ],
        "Span",
    )
}

#[test]
fn an_opentelemetry_span_event_is_a_completed_span_ending_when_it_was_written() {
    let t = Timeline::build(&[otel_span(
        1_000_000_000,
        "checkout",
        "2026-12-01T06:00:00.000000100Z",
        "2026-12-01T06:00:00.250000200+00:00",
    )]);
    let s = span(&t, "checkout");
    assert_eq!((s.start_ns, s.end_ns, s.placement), (750_000_000 - 100, 1_000_000_000, Placement::Async { lane: 0 }));
    // Every field stays, the stamps and the span's attributes with them.
    assert_eq!(arg(s, "PartC.user_id"), Some(&Value::Signed(42)));
    assert_eq!(arg(s, "PartB.startTime"), Some(&Value::Str("2026-12-01T06:00:00.000000100Z".into())));
    assert!(t.instants.is_empty());
}

#[test]
fn an_opentelemetry_span_event_with_bad_stamps_stays_an_instant_with_its_fields() {
    let t = Timeline::build(&[
        otel_span(10, "backwards", "2026-12-01T06:00:01Z", "2026-12-01T06:00:00Z"),
        otel_span(20, "garbled", "yesterday", "2026-12-01T06:00:00Z"),
    ]);
    assert!(t.spans.is_empty(), "{:?}", t.spans);
    let got: Vec<_> = t.instants.iter().map(|i| (i.name.as_str(), i.args.len())).collect();
    assert_eq!(got, [("backwards", 7), ("garbled", 7)]);
}

#[test]
fn an_sdk_span_carried_whole_is_one_completed_span_and_its_parts_are_no_instants() {
    let part = event(5, 1, 1, "app_otel_span_part", &[
        ("otlp_span_part", Value::Unsigned(42)),
        ("otlp_part", Value::Unsigned(1)),
        ("otlp_parts", Value::Unsigned(2)),
        ("otlp_span", Value::Bytes(vec![1, 2, 3])),
    ]);
    let head = event(10, 1, 1, "app_otel_span", &[
        ("span_start_ns", Value::Unsigned(2)),
        ("span_duration_ns", Value::Unsigned(6)),
        ("span_id", Value::Unsigned(42)),
        ("otlp_parts", Value::Unsigned(2)),
        ("otlp_span", Value::Bytes(vec![0])),
    ]);
    let t = Timeline::build(&[part, head]);
    assert_eq!(t.spans.iter().map(|s| (s.name.as_str(), s.start_ns, s.end_ns)).collect::<Vec<_>>(), [("app_otel_span", 2, 8)]);
    assert!(t.instants.is_empty(), "{:?}", t.instants);
}

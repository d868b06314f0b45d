//! A `tracing` span is the core's span: a begin event whose first fields
//! are `span_begin` (the id) and its trace context (in its `tracing`
//! parent's trace), then its level, then the span's fields, and an end whose
//! first field is `span_end` (the same id): the provider's `span_end`, or
//! the span's own `<name>_end` carrying the fields recorded after it began.
//! Nesting is their order on the thread; a span dropped on another thread
//! ends there.

use crate::support::*;

#[test]
fn spans_arrive_in_order_paired_by_id_with_their_fields() {
    let p = unique("spans");
    let run = record(&example(), &["spans", &p], &format!("{p}_*"));
    let [inside_line] = run.lines[..] else { panic!("one event line: {}", run.stdout) };
    let other_tid: u32 = run.stdout.lines().find_map(|l| l.strip_prefix("tid ")).unwrap().parse().unwrap();
    assert_eq!(
        names(&run),
        [
            format!("{p}_request"),
            format!("{p}_inner"),
            format!("{p}_span_end"),
            format!("{p}_ut_tracing_emit_{inside_line}"),
            format!("{p}_request_end"),
            format!("{p}_moved"),
            format!("{p}_span_end"),
        ]
    );
    let e = &run.events;
    let (request, inner, moved) = (unsigned(&e[0], "span_begin"), unsigned(&e[1], "span_begin"), unsigned(&e[5], "span_begin"));
    assert!(request != 0 && inner != 0 && moved != 0);
    assert!(request != inner && inner != moved && request != moved, "distinct ids: {request} {inner} {moved}");

    // The trace context after each begin's id: request a new trace's root,
    // inner (begun inside it) its child, moved (begun after) another root.
    let (hi, lo) = (unsigned(&e[0], "trace_id_hi"), unsigned(&e[0], "trace_id_lo"));
    let (moved_hi, moved_lo) = (unsigned(&e[5], "trace_id_hi"), unsigned(&e[5], "trace_id_lo"));
    assert!((hi, lo) != (0, 0) && (moved_hi, moved_lo) != (0, 0) && (hi, lo) != (moved_hi, moved_lo));
    let begin = |id: u64, (hi, lo): (u64, u64), parent: u64| {
        [("span_begin", Typed::U64(id)), ("trace_id_hi", Typed::U64(hi)), ("trace_id_lo", Typed::U64(lo)), ("parent_span_id", Typed::U64(parent))]
    };
    let with = |lead: [(&'static str, Typed); 4], rest: &[(&'static str, Typed)]| expect(&[&lead[..], rest].concat());
    assert_eq!(fields(&e[0]), with(begin(request, (hi, lo), 0), &[("level", s("INFO")), ("path", s("/a"))]));
    assert_eq!(fields(&e[1]), with(begin(inner, (hi, lo), request), &[("level", s("DEBUG")), ("depth", Typed::I64(3))]));
    assert_eq!(fields(&e[2]), expect(&[("span_end", Typed::U64(inner))]));
    assert_eq!(fields(&e[3]), expect(&[("level", s("INFO")), ("message", s("inside"))]));
    assert_eq!(fields(&e[4]), expect(&[("span_end", Typed::U64(request)), ("status", s("200"))]));
    assert_eq!(fields(&e[5]), with(begin(moved, (moved_hi, moved_lo), 0), &[("level", s("INFO")), ("n", Typed::U64(1))]));
    assert_eq!(fields(&e[6]), expect(&[("span_end", Typed::U64(moved))]));

    let tids: Vec<u32> = e.iter().map(|e| e.tid).collect();
    assert_eq!(tids, [run.pid, run.pid, run.pid, run.pid, run.pid, run.pid, other_tid]);
    assert_ne!(other_tid, run.pid);
    assert!(e.windows(2).all(|w| w[0].time_ns <= w[1].time_ns), "in time order");
}

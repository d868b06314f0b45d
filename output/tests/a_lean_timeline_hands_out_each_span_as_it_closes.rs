//! A builder's spans can be taken out as they close
//! (`drain_closed_spans`), not laid out, so that what folds them holds
//! none: with what `finish` closes, they are the spans of the whole
//! timeline. A `lean` builder keeps the processes, orphan ends and times,
//! and no instants, lost markers, threads or span args.

use usertrace_output::jsonl::Reader;
use usertrace_output::timeline::{Placement, Span, TimelineBuilder};
use usertrace_output::{Record, Timeline};

/// Nested, cross-thread, orphan-ended, completed, exit-closed and
/// still-open spans, an instant and a loss: one recording for the tests
/// that compare builders.
const RECORDING: &str = include_str!("fixtures/spans_of_every_kind.jsonl");


fn records() -> Vec<Record> {
    Reader::new(RECORDING.as_bytes()).collect::<Result<_, _>>().unwrap()
}

/// Each record pushed, then the spans it closed taken out; the spans
/// `finish` closed come last.
fn drained(mut builder: TimelineBuilder, records: &[Record]) -> (Vec<Span>, Timeline) {
    let mut spans = Vec::new();
    for record in records {
        builder.push(record);
        spans.extend(builder.drain_closed_spans());
    }
    let timeline = builder.finish();
    spans.extend(timeline.spans.iter().cloned());
    (spans, timeline)
}

/// A span as a drained one shows it: thread or async, at depth or lane 0.
fn unplaced(span: &Span) -> Span {
    let placement = if span.placement.is_thread() { Placement::Thread { depth: 0 } } else { Placement::Async { lane: 0 } };
    Span { placement, ..span.clone() }
}

fn by_start(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| (a.start_ns, a.end_ns, &a.name).cmp(&(b.start_ns, b.end_ns, &b.name)));
    spans
}

#[test]
fn drained_spans_are_the_timelines_spans_not_laid_out() {
    let records = records();
    let whole = Timeline::build(&records);
    let (spans, rest) = drained(TimelineBuilder::new(), &records);
    // The recording's end closes only the last span; the others were
    // handed out as they closed.
    assert_eq!(rest.spans.len(), 1);
    assert_eq!(by_start(spans), by_start(whole.spans.iter().map(unplaced).collect()));
    assert_eq!(Timeline { spans: Vec::new(), ..rest }, Timeline { spans: Vec::new(), ..whole });
}

#[test]
fn a_lean_builder_keeps_no_args_instants_losses_or_threads() {
    let records = records();
    let whole = Timeline::build(&records);
    let (spans, lean) = drained(TimelineBuilder::lean(), &records);
    let bare = |s: &Span| Span { args: Vec::new(), ..unplaced(s) };
    assert_eq!(by_start(spans), by_start(whole.spans.iter().map(bare).collect()));
    assert!(lean.instants.is_empty() && lean.lost.is_empty() && lean.threads.is_empty(), "{lean:#?}");
    assert_eq!((&lean.processes, lean.orphan_ends, lean.start_ns, lean.end_ns), (&whole.processes, whole.orphan_ends, whole.start_ns, whole.end_ns));
}

//! `TimelineBuilder` takes records one at a time, as `convert` reads them,
//! and lays out the same timeline as `Timeline::build` of the whole slice;
//! `without_instants` (for the report) keeps the same spans, processes,
//! losses and orphan ends, and no instants.

use usertrace_output::jsonl::Reader;
use usertrace_output::timeline::TimelineBuilder;
use usertrace_output::{Record, Timeline};

/// Nested, cross-thread, orphan-ended, completed, exit-closed and
/// still-open spans, an instant and a loss: one recording for the tests
/// that compare builders.
const RECORDING: &str = include_str!("fixtures/spans_of_every_kind.jsonl");

fn records() -> Vec<Record> {
    Reader::new(RECORDING.as_bytes()).collect::<Result<_, _>>().unwrap()
}

#[test]
fn record_by_record_gives_the_same_timeline() {
    let records = records();
    let whole = Timeline::build(&records);
    let mut builder = TimelineBuilder::new();
    for record in &records {
        builder.push(record);
    }
    let streamed = builder.finish();
    assert_eq!(streamed, whole);
    // What the recording holds is all there.
    assert_eq!((whole.spans.len(), whole.instants.len(), whole.orphan_ends, whole.lost.len()), (5, 2, 1, 1), "{whole:#?}");
    assert_eq!((whole.start_ns, whole.end_ns), (1, 21));
}

#[test]
fn without_instants_keeps_everything_else() {
    let records = records();
    let whole = Timeline::build(&records);
    let mut builder = TimelineBuilder::without_instants();
    for record in &records {
        builder.push(record);
    }
    let lean = builder.finish();
    assert!(lean.instants.is_empty());
    assert_eq!(lean, Timeline { instants: Vec::new(), ..whole });
}

#[test]
fn an_empty_builder_is_an_empty_timeline() {
    assert_eq!(TimelineBuilder::new().finish(), Timeline::build(&[]));
}

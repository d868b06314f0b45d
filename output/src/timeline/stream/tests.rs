use std::path::PathBuf;

use super::*;
use crate::record::Value;
use crate::test_records::*;
use crate::timeline::busy_recording::busy;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-stream-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The tables and items of `records` streamed through `stream`.
fn streamed(mut stream: TimelineStream, records: &[Record]) -> (Timeline, Vec<Item>) {
    for r in records {
        stream.push(r).unwrap();
    }
    let items = stream.finish().unwrap();
    let tables = items.tables().clone();
    (tables, items.map(Result::unwrap).collect())
}

fn in_memory(records: &[Record]) -> (Timeline, Vec<Item>) {
    streamed(TimelineStream::of(Spool::in_memory()), records)
}

/// Checks that `items` are in time order and nest on every track, and
/// that together they are `whole`'s spans, instants, lost markers and
/// scheduler events.
fn assert_items_are_the_timeline(items: &[Item], whole: &Timeline) {
    let mut last = 0;
    let mut depths: FxHashMap<u32, u32> = FxHashMap::default();
    let mut lanes: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    let (mut spans, mut instants, mut lost, mut sched) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut begun: FxHashMap<u64, Span> = FxHashMap::default();
    for item in items {
        let time = match item {
            Item::Begin { span, .. } => span.start_ns,
            Item::End(end) => end.time_ns,
            Item::Instant(i) => i.time_ns,
            Item::Lost(l) => l.time_ns,
            Item::Sched(e) => e.time_ns,
        };
        assert!(time >= last, "{item:?} goes back in time");
        last = time;
        match item {
            Item::Begin { span, serial } => {
                match span.placement {
                    Placement::Thread { depth } => {
                        let open = depths.entry(span.tid).or_default();
                        assert_eq!(depth, *open, "{span:?}");
                        *open += 1;
                    }
                    Placement::Async { lane } => assert!(lanes.insert((span.pid, lane), *serial).is_none(), "{span:?} overlaps its lane"),
                }
                assert!(begun.insert(*serial, span.clone()).is_none());
                spans.push(span.clone());
            }
            Item::End(end) => {
                let span = begun.remove(&end.serial).expect("an end after its begin");
                assert_eq!((end.time_ns, end.pid, end.tid, end.placement), (span.end_ns, span.pid, span.tid, span.placement));
                match end.placement {
                    Placement::Thread { depth } => {
                        let open = depths.get_mut(&end.tid).unwrap();
                        *open -= 1;
                        assert_eq!(depth, *open, "{end:?} ends out of nesting order");
                    }
                    Placement::Async { lane } => {
                        assert_eq!(end.name, span.name);
                        assert_eq!(lanes.remove(&(end.pid, lane)), Some(end.serial));
                    }
                }
            }
            Item::Instant(i) => instants.push(i.clone()),
            Item::Lost(l) => lost.push(l.clone()),
            Item::Sched(e) => sched.push(e.clone()),
        }
    }
    assert!(begun.is_empty(), "spans never ended: {begun:?}");
    let key = |s: &Span| (s.start_ns, s.pid, s.tid, s.name.clone(), s.end_ns);
    spans.sort_by_key(key);
    let mut expected = whole.spans.clone();
    expected.sort_by_key(key);
    assert_eq!(spans, expected);
    // Across threads, what has one time may come in another order.
    let key = |i: &Instant| (i.time_ns, i.pid, i.tid, i.name.clone());
    instants.sort_by_key(key);
    let mut expected = whole.instants.clone();
    expected.sort_by_key(key);
    assert_eq!(instants, expected);
    assert_eq!(lost, whole.lost);
    assert_eq!(sched, whole.sched);
}

fn tables_of(whole: &Timeline) -> Timeline {
    Timeline { spans: Vec::new(), instants: Vec::new(), lost: Vec::new(), sched: Vec::new(), ..whole.clone() }
}

#[test]
fn a_stream_holds_the_spans_instants_and_losses_of_the_built_timeline() {
    for records in [mixed(), busy(30), sleeping()] {
        let whole = Timeline::build(&records);
        let (tables, items) = in_memory(&records);
        assert_eq!(tables, tables_of(&whole));
        assert_items_are_the_timeline(&items, &whole);
    }
}

#[test]
fn a_built_timeline_gives_its_own_spans_as_items() {
    for records in [mixed(), busy(30), sleeping()] {
        let whole = Timeline::build(&records);
        let items: Vec<Item> = TimelineItems::of(&whole).map(Result::unwrap).collect();
        assert_items_are_the_timeline(&items, &whole);
    }
}

#[test]
fn items_spilled_to_many_files_come_back_in_the_same_order() {
    let dir = scratch("spill");
    let records = busy(400);
    // A budget of a few items: hundreds of runs, merged a level up by 64s.
    let mut stream = TimelineStream::with_budget(dir.clone(), 512);
    for r in &records {
        stream.push(r).unwrap();
    }
    let runs = stream.runs();
    assert!((2..64 * 2).contains(&runs), "{runs} runs");
    // Each run is unlinked as soon as it is made: nothing is left to see.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let items = stream.finish().unwrap();
    let tables = items.tables().clone();
    let items: Vec<Item> = items.map(Result::unwrap).collect();
    assert_eq!((tables, items), in_memory(&records));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_value_comes_back_from_a_file_as_it_was() {
    let dir = scratch("values");
    let values = [
        Value::Unsigned(u64::MAX),
        Value::Signed(i64::MIN),
        Value::Signed(i64::MAX),
        Value::Signed(-1),
        Value::Bool(true),
        Value::Bool(false),
        Value::F32(1.1),
        Value::F64(f64::NAN),
        Value::F64(f64::NEG_INFINITY),
        Value::Str("héllo \"x\"\n".into()),
        Value::Bytes(vec![0, 0xab, 0xff]),
        Value::Array(vec![]),
        Value::Array(vec![Value::Signed(-2), Value::Array(vec![Value::Str("in".into())])]),
        Value::Struct(vec![("x".into(), Value::Unsigned(7)), ("inner".into(), Value::Struct(vec![("y".into(), Value::F32(0.5))]))]),
    ];
    let fields: Vec<(String, Value)> = values.iter().enumerate().map(|(i, v)| (format!("f{i}"), v.clone())).collect();
    let fields: Vec<(&str, Value)> = fields.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
    // A budget of nothing: every item goes through a file.
    let (_, items) = streamed(TimelineStream::with_budget(dir.clone(), 0), &[event(5, 1, 1, "all", &fields)]);
    let [Item::Instant(i)] = items.as_slice() else { panic!("{items:?}") };
    let as_text = |args: &[(String, Value)]| args.iter().map(|(n, v)| format!("{n}={v:?}")).collect::<Vec<_>>();
    assert_eq!(as_text(&i.args), as_text(&fields.iter().map(|(n, v)| ((*n).to_owned(), v.clone())).collect::<Vec<_>>()));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_span_still_open_at_the_end_is_closed_there_as_unfinished() {
    let (_, items) = in_memory(&[begin(10, 1, 1, "open", 1), event(20, 1, 1, "tick", &[]), event(30, 2, 2, "other", &[])]);
    let Some(Item::Begin { span, .. }) = items.first() else { panic!("{items:?}") };
    assert_eq!((span.end_ns, span.unfinished), (30, Some("recording ended")));
    assert_eq!(span.args, [("unfinished".into(), Value::Str("recording ended".into()))]);
    let Some(Item::End(end)) = items.last() else { panic!("{items:?}") };
    assert_eq!((end.time_ns, end.placement), (30, Placement::Thread { depth: 0 }));
}

#[test]
fn items_of_one_time_keep_each_tracks_order() {
    // On a thread: a zero-length child at its parent's end, a sibling
    // from where another ends, an instant at a slice's end. On a lane:
    // one span ending where the next begins, and a zero-length one.
    let records = [
        begin(10, 1, 1, "parent", 1),
        begin(20, 1, 1, "child", 2),
        end(20, 1, 1, "child", 2),
        end(20, 1, 1, "parent", 1),
        begin(20, 1, 1, "next", 3),
        begin(20, 1, 1, "away", 4),
        event(30, 1, 1, "at_end", &[]),
        end(30, 1, 2, "away", 4),
        end(30, 1, 1, "next", 3),
        begin(30, 1, 1, "zero", 5),
        end(30, 1, 2, "zero", 5),
        begin(30, 1, 1, "after", 6),
        end(40, 1, 2, "after", 6),
    ];
    let (_, items) = in_memory(&records);
    let got: Vec<String> = items
        .iter()
        .map(|i| match i {
            Item::Begin { span, .. } => format!("{:?} begin {} {}", span.placement, span.name, span.start_ns),
            Item::End(e) => format!("{:?} end {}", e.placement, e.time_ns),
            Item::Instant(i) => format!("instant {} {}", i.name, i.time_ns),
            Item::Lost(l) => l.name.clone(),
            Item::Sched(e) => format!("sched {}", e.time_ns),
        })
        .collect();
    assert_eq!(
        got,
        [
            "Thread { depth: 0 } begin parent 10",
            "Async { lane: 0 } begin away 20",
            "Thread { depth: 1 } begin child 20",
            "Thread { depth: 1 } end 20",
            "Thread { depth: 0 } end 20",
            "Thread { depth: 0 } begin next 20",
            "Async { lane: 0 } end 30",
            "Async { lane: 0 } begin after 30",
            "Async { lane: 1 } begin zero 30",
            "Async { lane: 1 } end 30",
            "instant at_end 30",
            "Thread { depth: 0 } end 30",
            "Async { lane: 0 } end 40",
        ]
    );
    assert_items_are_the_timeline(&items, &Timeline::build(&records));
}

#[test]
fn scheduler_records_come_back_from_files_in_record_order_after_the_items_of_their_time() {
    let records = sleeping();
    let whole = Timeline::build(&records);
    assert_eq!(whole.sched.len(), 6);
    let dir = scratch("sched");
    let (tables, items) = streamed(TimelineStream::with_budget(dir.clone(), 0), &records);
    std::fs::remove_dir_all(dir).unwrap();
    assert_eq!(tables, tables_of(&whole));
    assert_items_are_the_timeline(&items, &whole);
    // At 1000 the span ends, then the migration of that time follows.
    let at_1000: Vec<bool> = items.iter().filter(|i| matches!(i, Item::End(e) if e.time_ns == 1000) || matches!(i, Item::Sched(e) if e.time_ns == 1000)).map(|i| matches!(i, Item::Sched(_))).collect();
    assert_eq!(at_1000, [false, true]);
}

#[test]
fn a_stream_without_scheduler_records_says_it_has_none() {
    let (mut stream, mut with) = (TimelineStream::in_memory(), TimelineStream::in_memory());
    for r in mixed() {
        stream.push(&r).unwrap();
    }
    for r in sleeping() {
        with.push(&r).unwrap();
    }
    assert!(!stream.finish().unwrap().has_sched());
    assert!(with.finish().unwrap().has_sched());
    assert!(!TimelineItems::of(&Timeline::build(&mixed())).has_sched());
}

#[test]
fn a_streamed_span_keeps_its_trace_context() {
    let records = [
        traced_begin(1, 1, 1, "req", 5, (u128::MAX - 1, 9), &[("n", Value::Unsigned(1))]),
        begin(2, 1, 1, "old", 6),
        end(3, 1, 1, "old", 6),
        end(4, 1, 1, "req", 5),
    ];
    let (_, items) = in_memory(&records);
    let traces: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            Item::Begin { span, .. } => Some((span.name.as_str(), span.trace)),
            _ => None,
        })
        .collect();
    let said = crate::timeline::SpanTrace { trace_id: u128::MAX - 1, parent_span_id: 9 };
    assert_eq!(traces, [("req", Some(said)), ("old", None)]);
    assert_items_are_the_timeline(&items, &Timeline::build(&records));
}

use std::time::Duration;

use super::*;
use crate::otlp::mapping::map_records;
use crate::otlp::proto::common::v1::any_value::Value as Any;
use crate::otlp::proto::trace::v1::Span;
use crate::test_records::{begin, end, event, exit, process};

const CLOCK: Clock = Clock { unix_minus_monotonic_ns: 0 };

fn settings() -> ResourceSettings {
    ResourceSettings { host_name: "h".into(), ..ResourceSettings::default() }
}

fn spans(o: &Otlp) -> Vec<&Span> {
    o.traces.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans).collect()
}

fn names(o: &Otlp) -> Vec<&str> {
    spans(o).iter().map(|s| s.name.as_str()).collect()
}

fn named<'a>(o: &'a Otlp, name: &str) -> &'a Span {
    spans(o).into_iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no span {name}"))
}

fn unfinished(s: &Span) -> Option<String> {
    s.attributes.iter().find(|kv| kv.key == "unfinished").and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
        Any::StringValue(v) => Some(v.clone()),
        _ => None,
    })
}

fn service(o: &Otlp) -> Vec<String> {
    o.traces
        .resource_spans
        .iter()
        .flat_map(|r| &r.resource.as_ref().unwrap().attributes)
        .filter(|kv| kv.key == "process.executable.name")
        .filter_map(|kv| match kv.value.as_ref()?.value.as_ref()? {
            Any::StringValue(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn open_spans_beyond_the_count_are_sent_unfinished_and_forgotten() {
    let limits = OpenSpanLimits { max_open_spans: 3, max_age: Duration::from_secs(60) };
    let mut mapper = BatchMapper::with_limits(settings(), CLOCK, limits);
    let first: Vec<Record> = (1..=5).map(|n| begin(n * 10, 1, 1, &format!("open{n}"), n)).collect();
    assert!(spans(&mapper.map_batch(&first)).is_empty());
    assert_eq!(mapper.open_spans(), 5);
    let second = mapper.map_batch(&[event(100, 1, 2, "tick", &[])]);
    assert_eq!(names(&second), ["open1", "open2"], "the oldest two");
    assert_eq!(unfinished(named(&second, "open1")).as_deref(), Some(LET_GO));
    assert_eq!((mapper.open_spans(), mapper.spans_let_go()), (3, 2));
    // The end of a span let go is an end without its begin: a log record.
    let third = mapper.map_batch(&[end(110, 1, 1, "open1", 1), end(120, 1, 1, "open5", 5)]);
    assert_eq!(names(&third), ["open5"]);
    assert_eq!(third.log_count(), 1);
    assert_eq!(names(&mapper.finish()), ["open3", "open4"]);
}

#[test]
fn spans_open_longer_than_the_age_limit_are_sent_unfinished() {
    let limits = OpenSpanLimits { max_open_spans: 100, max_age: Duration::from_nanos(1_000) };
    let mut mapper = BatchMapper::with_limits(settings(), CLOCK, limits);
    mapper.map_batch(&[begin(10, 1, 1, "old", 1), begin(900, 1, 1, "young", 2)]);
    let later = mapper.map_batch(&[event(1_500, 1, 3, "tick", &[])]);
    assert_eq!(names(&later), ["old"]);
    assert_eq!(unfinished(named(&later, "old")).as_deref(), Some(LET_GO));
    assert_eq!((mapper.open_spans(), mapper.spans_let_go()), (1, 1));
}

#[test]
fn an_exited_process_is_forgotten_once_its_last_span_is_sent() {
    let mut mapper = BatchMapper::new(settings(), CLOCK);
    mapper.map_batch(&[process(1, 2, "/usr/bin/short", &["short"]), begin(10, 2, 2, "work", 1), process(2, 3, "/usr/bin/long", &["long"])]);
    assert_eq!(mapper.processes(), 2);
    let exited = mapper.map_batch(&[exit(20, 2, 2)]);
    assert_eq!(unfinished(named(&exited, "work")).as_deref(), Some("process exited"));
    assert_eq!(service(&exited), ["short"], "named by its process record to the last");
    assert_eq!((mapper.processes(), mapper.processes_forgotten()), (1, 1));
    let later = mapper.map_batch(&[begin(30, 3, 3, "serve", 1), end(40, 3, 3, "serve", 1)]);
    assert_eq!(service(&later), ["long"], "a process that lives on keeps its name");
}

#[test]
fn carried_spans_a_batch_does_not_need_wait_and_keep_their_ids_and_children() {
    let records = [
        begin(10, 1, 1, "outer", 1),
        event(20, 1, 2, "elsewhere", &[]),
        begin(30, 1, 3, "child", 2),
        end(31, 1, 3, "child", 2),
        end(40, 1, 1, "outer", 1),
    ];
    let records = {
        let mut r = records.to_vec();
        // `child` names `outer` as its parent from another thread.
        if let Record::Event(e) = &mut r[2] {
            e.fields.push((SPAN_PARENT.into(), Value::Unsigned(1)));
        }
        r
    };
    let whole = map_records(&records, &settings(), CLOCK);
    let mut mapper = BatchMapper::new(settings(), CLOCK);
    let parts: Vec<Otlp> = records.iter().map(|r| mapper.map_batch(std::slice::from_ref(r))).collect();
    assert_eq!(named(&parts[3], "child"), named(&whole, "child"), "its parent found though carried");
    assert_eq!(named(&parts[4], "outer"), named(&whole, "outer"));
    assert_eq!(parts[1].log_count(), 1);
    assert_eq!(mapper.open_spans(), 0);
}

/// Tail-based export settles events item by item: every event must be in
/// exactly one mapped item, whichever batch its span ends in, whether its
/// span ended, was let go, or was closed by an exit or the recording's end.
#[test]
fn the_mapped_items_account_for_every_event_exactly_once() {
    let records = [
        process(1, 1, "/usr/bin/app", &["app"]),
        begin(10, 1, 1, "outer", 1),
        event(11, 1, 1, "tick", &[]),
        begin(12, 1, 2, "inner", 2),
        end(13, 1, 2, "inner", 2),
        event(14, 1, 3, "outside", &[]),
        end(15, 1, 1, "stray", 7),
        begin(16, 1, 4, "old", 3),
        begin(17, 1, 5, "dies", 4),
        exit(18, 1, 5),
        begin(19, 1, 6, "never_ends", 5),
        end(20, 1, 1, "outer", 1),
    ];
    let events = records.iter().filter(|r| matches!(r, Record::Event(_))).count() as u64;
    for size in 1..=records.len() {
        let limits = OpenSpanLimits { max_open_spans: 2, max_age: Duration::from_secs(60) };
        let mut mapper = BatchMapper::with_limits(settings(), CLOCK, limits);
        let mapped: u64 = records.chunks(size).map(|batch| mapper.map_batch_items(batch).events()).sum();
        assert_eq!(mapped + mapper.finish_items().events(), events, "batches of {size}");
    }
}

/// A span's scheduler view does not depend on where the batches break:
/// thread 11's sleep_span (switched out asleep, woken, run, preempted, run
/// again) ends with the attributes the whole recording gives it, whatever
/// the batch size, and nothing stays carried after it.
#[test]
fn a_span_across_batches_keeps_its_whole_scheduler_view() {
    use crate::test_records::{switch, R};
    let sleeping = crate::test_records::sleeping();
    // The same, with the thread switched in before its span begins: what it
    // was doing at the begin comes from a batch before the begin's.
    let switched_in_before = [vec![switch(50, 0, R, 11)], sleeping.clone()].concat();
    for (records, want_unknown) in [(sleeping, true), (switched_in_before, false)] {
        a_span_across_batches_keeps(&records, want_unknown);
    }
}

fn a_span_across_batches_keeps(records: &[Record], want_unknown: bool) {
    let whole = map_records(records, &settings(), CLOCK);
    let expected = named(&whole, "sleep_span");
    let attr = |key: &str| expected.attributes.iter().find(|kv| kv.key == key).map(|kv| kv.value.clone().unwrap().value);
    assert_eq!(attr("usertrace.sched.sleeping_ns"), Some(Some(Any::IntValue(700))), "the whole recording's view");
    // Without a record before the begin, [100, 200) is unknown; with one, known.
    assert_eq!(attr("usertrace.sched.unknown_ns").is_some(), want_unknown);
    for size in 1..=records.len() {
        let mut mapper = BatchMapper::new(settings(), CLOCK);
        let mut sent: Vec<Span> = records.chunks(size).flat_map(|batch| spans(&mapper.map_batch(batch)).into_iter().cloned().collect::<Vec<_>>()).collect();
        sent.extend(spans(&mapper.finish()).into_iter().cloned());
        let got: Vec<&Span> = sent.iter().filter(|s| s.name == "sleep_span").collect();
        assert_eq!(got, [expected], "batches of {size}");
        assert_eq!((mapper.open_spans(), mapper.sched_carried()), (0, 0), "batches of {size}");
    }
}

/// Scheduler records of threads without an open span are not carried, and
/// those of an open span's thread are, until it ends.
#[test]
fn only_the_scheduler_records_of_open_spans_threads_are_carried() {
    use crate::test_records::{switch, S};
    let mut mapper = BatchMapper::new(settings(), CLOCK);
    mapper.map_batch(&[begin(10, 1, 11, "open", 1), switch(20, 11, S, 0), switch(30, 40, S, 41)]);
    assert_eq!((mapper.open_spans(), mapper.sched_carried()), (1, 1));
    mapper.map_batch(&[switch(50, 0, 0, 11), switch(60, 41, S, 40)]);
    assert_eq!(mapper.sched_carried(), 2, "its thread's switch in joins the one out");
    let o = mapper.map_batch(&[end(70, 1, 11, "open", 1)]);
    assert_eq!(names(&o), ["open"]);
    assert_eq!((mapper.open_spans(), mapper.sched_carried()), (0, 0));
}

use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Status;

use super::*;

const MS: u64 = 1_000_000;

fn policy(rules: &[&str]) -> TailPolicy {
    TailPolicy { rules: rules.iter().map(|r| TailRule::parse(r).unwrap()).collect(), limits: TailLimits::default() }
}

fn resource(pid: u32) -> Resource {
    let value = AnyValue { value: Some(any_value::Value::IntValue(i64::from(pid))) };
    Resource { attributes: vec![KeyValue { key: "process.pid".into(), value: Some(value), ..Default::default() }], ..Default::default() }
}

/// A span of trace `trace` (one byte repeated), ending at `end_ms`.
fn span(pid: u32, trace: u8, id: u8, parent: Option<u8>, name: &str, start_ms: u64, end_ms: u64) -> MappedItem<Span> {
    let item = Span {
        trace_id: vec![trace; 16],
        span_id: vec![id; 8],
        parent_span_id: parent.map(|p| vec![p; 8]).unwrap_or_default(),
        name: name.into(),
        start_time_unix_nano: start_ms * MS,
        end_time_unix_nano: end_ms * MS,
        ..Default::default()
    };
    MappedItem { pid, events: 2, item, scope: None }
}

fn failed(mut s: MappedItem<Span>) -> MappedItem<Span> {
    s.item.status = Some(Status { message: "declined".into(), code: status::StatusCode::Error as i32 });
    s
}

fn log(pid: u32, trace: Option<u8>, at_ms: u64) -> MappedItem<LogRecord> {
    let item = LogRecord { time_unix_nano: at_ms * MS, trace_id: trace.map(|t| vec![t; 16]).unwrap_or_default(), ..Default::default() };
    MappedItem { pid, events: 1, item, scope: None }
}

fn batch(spans: Vec<MappedItem<Span>>, logs: Vec<MappedItem<LogRecord>>) -> Mapped {
    let resources = spans.iter().map(|s| s.pid).chain(logs.iter().map(|l| l.pid)).map(|pid| (pid, resource(pid))).collect();
    Mapped { resources, spans, logs, declarations: 0 }
}

fn names(m: &Mapped) -> Vec<&str> {
    m.spans.iter().map(|s| s.item.name.as_str()).collect()
}

#[test]
fn a_slow_span_keeps_its_whole_trace_across_processes_and_nothing_else() {
    let mut sampler = TailSampler::new(policy(&["handle>250ms"]));
    // Request 1 is quick; request 2's backend span (pid 20) is slow. Each
    // trace: the backend's `handle`, then the frontend's `request` (root).
    let sent = sampler.admit(batch(
        vec![span(20, 1, 11, Some(10), "handle", 0, 5), span(10, 1, 10, None, "request", 0, 6), span(10, 2, 20, None, "prepare", 6, 7)],
        vec![log(10, Some(2), 7)],
    ));
    assert!(names(&sent).is_empty(), "nothing is decided yet: {:?}", names(&sent));
    let sent = sampler.admit(batch(vec![span(20, 2, 21, Some(22), "handle", 8, 400)], vec![]));
    // The held `prepare` and log record of trace 2 go out with it.
    assert_eq!(names(&sent), ["prepare", "handle"]);
    assert_eq!(sent.logs.len(), 1);
    assert_eq!(sent.resources.keys().copied().collect::<Vec<_>>(), [10, 20]);
    assert_eq!(sent.events(), 5);
    // The rest of trace 2 follows at once; trace 1 waits, then goes.
    let sent = sampler.admit(batch(vec![span(10, 2, 22, Some(20), "request", 7, 401)], vec![]));
    assert_eq!(names(&sent), ["request"]);
    sampler.finish();
    let c = sampler.counts();
    assert_eq!((c.traces_kept, c.traces_dropped, c.spans_dropped, c.logs_dropped, c.events_dropped), (1, 1, 2, 0, 4));
    assert_eq!(sampler.held_traces(), 0);
}

#[test]
fn an_error_status_keeps_the_trace_and_a_slow_span_of_another_name_does_not() {
    let mut sampler = TailSampler::new(policy(&["error", "db_*>1s"]));
    let sent = sampler.admit(batch(vec![failed(span(1, 1, 1, None, "charge", 0, 2)), span(1, 2, 2, None, "render", 0, 5_000)], vec![]));
    assert_eq!(names(&sent), ["charge"]);
    let sent = sampler.admit(batch(vec![span(1, 3, 3, None, "db_query", 0, 1_001)], vec![]));
    assert_eq!(names(&sent), ["db_query"]);
    sampler.finish();
    assert_eq!((sampler.counts().traces_kept, sampler.counts().traces_dropped), (2, 1));
}

#[test]
fn log_records_outside_any_span_pass_and_those_inside_follow_their_trace() {
    let mut sampler = TailSampler::new(policy(&["error"]));
    let sent = sampler.admit(batch(vec![span(1, 1, 1, None, "quiet", 0, 2)], vec![log(1, None, 1), log(1, Some(1), 1)]));
    assert_eq!((sent.spans.len(), sent.logs.len()), (0, 1));
    assert!(sent.logs[0].item.trace_id.is_empty());
    sampler.finish();
    assert_eq!((sampler.counts().spans_dropped, sampler.counts().logs_dropped, sampler.counts().events_dropped), (1, 1, 3));
}

#[test]
fn an_unremarkable_trace_is_dropped_once_its_root_ended_the_wait_ago_and_stragglers_follow() {
    let mut sampler = TailSampler::new(policy(&["error"]));
    sampler.admit(batch(vec![span(1, 1, 1, None, "root", 0, 10)], vec![]));
    // Not yet: 5 s after the root's end is not past the wait.
    sampler.admit(batch(vec![span(1, 9, 9, None, "other", 0, 5_010)], vec![]));
    assert_eq!(sampler.counts().traces_dropped, 0);
    sampler.admit(batch(vec![span(1, 8, 8, None, "later", 0, 5_011)], vec![]));
    assert_eq!(sampler.counts().traces_dropped, 1);
    // A straggler of the dropped trace, even a failed one, is dropped too.
    let sent = sampler.admit(batch(vec![failed(span(1, 1, 2, Some(1), "late", 0, 5_012))], vec![]));
    assert!(sent.spans.is_empty());
    assert_eq!(sampler.counts().spans_dropped, 2);
}

#[test]
fn a_trace_whose_root_never_ends_is_dropped_after_the_longest_hold() {
    let mut sampler = TailSampler::new(policy(&["error"]));
    sampler.admit(batch(vec![span(1, 1, 2, Some(1), "child", 0, 10)], vec![]));
    sampler.admit(batch(vec![span(1, 2, 3, Some(4), "x", 0, 60_010)], vec![]));
    assert_eq!(sampler.counts().traces_dropped, 0);
    sampler.admit(batch(vec![span(1, 2, 5, Some(4), "y", 0, 60_011)], vec![]));
    assert_eq!((sampler.counts().traces_dropped, sampler.held_traces()), (1, 1));
}

#[test]
fn past_the_byte_cap_the_traces_held_longest_go_first() {
    let one = span(1, 1, 1, Some(9), "a", 0, 1).item.encoded_len();
    let limits = TailLimits { max_held_bytes: one * 3, ..TailLimits::default() };
    let mut sampler = TailSampler::new(TailPolicy { rules: vec![TailRule::Error], limits });
    for t in 1..=5u8 {
        // Equal sizes, and equal times: the lowest trace id counts oldest.
        sampler.admit(batch(vec![span(1, t, t, Some(99), "a", 0, 1)], vec![]));
    }
    let c = sampler.counts();
    assert_eq!((c.traces_dropped, c.traces_cut_short, sampler.held_traces()), (2, 2, 3));
    assert!(c.peak_held_bytes <= one * 4, "{} > {}", c.peak_held_bytes, one * 4);
    // The newest are still held: a failure in trace 5 sends it whole.
    let sent = sampler.admit(batch(vec![failed(span(1, 5, 50, Some(99), "b", 0, 6))], vec![]));
    assert_eq!(names(&sent), ["a", "b"]);
}

#[test]
fn rules_read_error_or_name_and_duration() {
    assert_eq!(TailRule::parse("error").unwrap(), TailRule::Error);
    assert_eq!(TailRule::parse("handle>250ms").unwrap().to_string(), "handle>250ms");
    let e = TailRule::parse("errors").unwrap_err();
    assert!(e.contains("NAME>DURATION") && e.contains("`error`"), "{e}");
}

//! The ids a program wrote in its spans' begins (the core's trace fields)
//! are the ids exported: its span ids, its trace ids, its parents, even
//! in another process or not recorded at all. Spans that did not say keep
//! the rules of before.

use super::*;
use crate::otlp::ids::SpanKey;
use crate::otlp::live::BatchMapper;
use crate::test_records::*;

const CLOCK: Clock = Clock { unix_minus_monotonic_ns: 1_700_000_000_000_000_000 };
const TRACE: u128 = 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736;
const REMOTE_PARENT: u64 = 0x00f0_67aa_0ba9_02b7;

fn map(records: &[Record]) -> Otlp {
    map_records(records, &ResourceSettings::default(), CLOCK)
}

fn named<'a>(o: &'a Otlp, name: &str) -> &'a Span {
    o.traces
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name}"))
}

fn ids(s: &Span) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    (s.trace_id.clone(), s.span_id.clone(), s.parent_span_id.clone())
}

fn be(id: u64) -> Vec<u8> {
    id.to_be_bytes().to_vec()
}

#[test]
fn a_span_that_wrote_its_trace_is_exported_with_the_ids_it_wrote() {
    let o = map(&[
        traced_begin(10, 1, 1, "request", 0xaaaa, (TRACE, REMOTE_PARENT), &[("path", Value::Str("/".into()))]),
        end(20, 1, 1, "request", 0xaaaa),
    ]);
    let request = named(&o, "request");
    assert_eq!(ids(request), (TRACE.to_be_bytes().to_vec(), be(0xaaaa), be(REMOTE_PARENT)), "its parent is in another process");
    let keys: Vec<&str> = request.attributes.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, ["path", "thread.id", "thread.name"], "the trace fields are no attributes");
}

#[test]
fn a_root_it_wrote_has_no_parent_and_its_children_name_it() {
    let o = map(&[
        traced_begin(10, 1, 1, "root", 1, (TRACE, 0), &[]),
        traced_begin(20, 1, 1, "child", 2, (TRACE, 1), &[]),
        end(30, 1, 1, "child", 2),
        end(40, 1, 1, "root", 1),
    ]);
    assert_eq!(ids(named(&o, "root")), (TRACE.to_be_bytes().to_vec(), be(1), vec![]));
    assert_eq!(ids(named(&o, "child")), (TRACE.to_be_bytes().to_vec(), be(2), be(1)));
}

#[test]
fn a_span_whose_parent_is_in_another_process_points_at_it() {
    // A client (pid 1) calls a server (pid 2) that continued its trace.
    let o = map(&[
        traced_begin(10, 1, 1, "client_call", 0x11, (TRACE, 0), &[]),
        traced_begin(20, 2, 2, "server_handle", 0x22, (TRACE, 0x11), &[]),
        end(30, 2, 2, "server_handle", 0x22),
        end(40, 1, 1, "client_call", 0x11),
    ]);
    let (client, server) = (named(&o, "client_call"), named(&o, "server_handle"));
    assert_eq!(server.parent_span_id, client.span_id);
    assert_eq!(server.trace_id, client.trace_id);
    assert_eq!(o.traces.resource_spans.len(), 2, "one resource per process, one trace");
}

#[test]
fn what_the_writer_said_wins_over_nesting_and_span_parent() {
    // Begun inside `outer` on its thread, with a `span_parent` too, but it
    // said it is a root of another trace: it is.
    let other = TRACE ^ 1;
    let o = map(&[
        traced_begin(10, 1, 1, "outer", 1, (TRACE, 0), &[]),
        traced_begin(20, 1, 1, "own", 2, (other, 0), &[("span_parent", Value::Unsigned(1))]),
        end(30, 1, 1, "own", 2),
        end(40, 1, 1, "outer", 1),
    ]);
    assert_eq!(ids(named(&o, "own")), (other.to_be_bytes().to_vec(), be(2), vec![]));
}

#[test]
fn a_span_that_did_not_say_nests_under_one_that_did_with_its_own_id() {
    // A span begun by id (the C macros, Python, Java) inside a span with a
    // trace: in that trace, under it, and its own W3C id.
    let o = map(&[
        traced_begin(10, 1, 1, "request", 0xaaaa, (TRACE, REMOTE_PARENT), &[]),
        traced_begin(20, 1, 1, "query", 0xbbbb, (0, 0), &[]),
        event(25, 1, 1, "note", &[]),
        end(30, 1, 1, "query", 0xbbbb),
        end(40, 1, 1, "request", 0xaaaa),
    ]);
    assert_eq!(ids(named(&o, "query")), (TRACE.to_be_bytes().to_vec(), be(0xbbbb), be(0xaaaa)));
    let log = &o.logs.resource_logs[0].scope_logs[0].log_records[0];
    assert_eq!((log.trace_id.clone(), log.span_id.clone()), (TRACE.to_be_bytes().to_vec(), be(0xbbbb)), "the log record is in it");
}

#[test]
fn a_root_that_did_not_say_keeps_its_own_id_and_a_derived_trace() {
    let o = map(&[traced_begin(10, 1, 1, "alone", 0xcccc, (0, 0), &[]), end(20, 1, 1, "alone", 0xcccc)]);
    let alone = named(&o, "alone");
    assert_eq!(alone.span_id, be(0xcccc));
    assert_eq!(alone.trace_id, SpanKey { pid: 1, id: 0xcccc, tid: 1, start_ns: 10, name: "alone" }.trace_id());
    assert!(alone.parent_span_id.is_empty());
}

#[test]
fn a_recording_without_the_trace_fields_keeps_its_derived_ids() {
    let o = map(&[begin(10, 1, 1, "old", 7), begin(20, 1, 1, "inner", 8), end(30, 1, 1, "inner", 8), end(40, 1, 1, "old", 7)]);
    let key = SpanKey { pid: 1, id: 7, tid: 1, start_ns: 10, name: "old" };
    assert_eq!((named(&o, "old").span_id.clone(), named(&o, "old").trace_id.clone()), (key.span_id().to_vec(), key.trace_id().to_vec()));
    assert_eq!(named(&o, "inner").parent_span_id, key.span_id());
}

#[test]
fn a_live_child_sent_before_its_parent_ends_names_the_parent_the_program_wrote() {
    let mut mapper = BatchMapper::new(ResourceSettings::default(), CLOCK);
    let first = mapper.map_batch(&[
        traced_begin(10, 1, 1, "request", 1, (TRACE, REMOTE_PARENT), &[]),
        traced_begin(20, 1, 2, "worker", 2, (TRACE, 1), &[]),
        end(30, 1, 2, "worker", 2),
    ]);
    assert_eq!(ids(named(&first, "worker")), (TRACE.to_be_bytes().to_vec(), be(2), be(1)));
    assert_eq!(first.span_count(), 1, "the request is still open");
    let second = mapper.map_batch(&[end(40, 1, 1, "request", 1)]);
    assert_eq!(ids(named(&second, "request")), (TRACE.to_be_bytes().to_vec(), be(1), be(REMOTE_PARENT)));
}

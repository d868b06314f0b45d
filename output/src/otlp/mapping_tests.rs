use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::logs::v1::LogRecord;

use super::*;
use crate::otlp::ids::SpanKey;
use crate::otlp::live::BatchMapper;
use crate::record::EventRecord;
use crate::test_records::*;

const CLOCK: Clock = Clock { unix_minus_monotonic_ns: 1_700_000_000_000_000_000 };

fn settings() -> ResourceSettings {
    ResourceSettings { service_name: None, host_name: "node-1".into(), attributes: vec![("deployment.environment".into(), "test".into())], omit_command_line: false }
}

fn spans(o: &Otlp) -> Vec<&Span> {
    o.traces.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans).collect()
}

fn logs(o: &Otlp) -> Vec<&LogRecord> {
    o.logs.resource_logs.iter().flat_map(|r| &r.scope_logs).flat_map(|s| &s.log_records).collect()
}

fn named<'a>(o: &'a Otlp, name: &str) -> &'a Span {
    spans(o).into_iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no span {name}"))
}

fn attr(attributes: &[KeyValue], key: &str) -> Option<Any> {
    attributes.iter().find(|a| a.key == key).and_then(|a| a.value.clone()).and_then(|v| v.value)
}

fn id(pid: u32, span: u64, tid: u32, start_ns: u64, name: &str) -> SpanKey<'_> {
    SpanKey { pid, id: span, tid, start_ns, name }
}

#[test]
fn nested_spans_get_derived_ids_and_their_parents() {
    let o = map_records(
        &[begin(10, 1, 1, "outer", 1), begin(20, 1, 1, "inner", 2), end(30, 1, 1, "inner", 2), end(40, 1, 1, "outer", 1)],
        &settings(),
        CLOCK,
    );
    let (outer, inner) = (named(&o, "outer"), named(&o, "inner"));
    let outer_key = id(1, 1, 1, 10, "outer");
    assert_eq!(outer.span_id, outer_key.span_id());
    assert_eq!(outer.trace_id, outer_key.trace_id());
    assert!(outer.parent_span_id.is_empty());
    assert_eq!(inner.span_id, id(1, 2, 1, 20, "inner").span_id());
    assert_eq!(inner.parent_span_id, outer.span_id);
    assert_eq!(inner.trace_id, outer.trace_id);
    assert_eq!((inner.start_time_unix_nano, inner.end_time_unix_nano), (1_700_000_000_000_000_020, 1_700_000_000_000_000_030));
    // Derived, so stable: the same recording maps to the same ids.
    assert_ne!(outer.span_id, inner.span_id);
    let again = map_records(&[begin(10, 1, 1, "outer", 1), end(40, 1, 1, "outer", 1)], &settings(), CLOCK);
    assert_eq!(named(&again, "outer").span_id, outer.span_id);
}

#[test]
fn a_span_ended_on_another_thread_hangs_under_what_was_open_where_it_began() {
    let o = map_records(
        &[begin(10, 1, 1, "request", 1), begin(20, 1, 1, "handoff", 2), end(50, 1, 2, "handoff", 2), end(60, 1, 1, "request", 1)],
        &settings(),
        CLOCK,
    );
    let (request, handoff) = (named(&o, "request"), named(&o, "handoff"));
    assert_eq!(handoff.parent_span_id, request.span_id);
    assert_eq!(handoff.trace_id, request.trace_id);
    assert_eq!(attr(&handoff.attributes, "thread.id"), Some(Any::IntValue(1)));
}

#[test]
fn a_request_that_ends_before_the_write_it_handed_off_still_parents_it_and_its_query() {
    // The timeline draws request and write on async tracks (they
    // interleave), but both the query and the write began inside it.
    let o = map_records(
        &[
            begin(10, 1, 1, "request", 1),
            event(15, 1, 1, "cache_miss", &[]),
            begin(20, 1, 1, "query", 2),
            end(40, 1, 1, "query", 2),
            begin(50, 1, 1, "write", 3),
            end(90, 1, 1, "request", 1),
            end(120, 1, 2, "write", 3),
            begin(130, 1, 1, "next", 4),
            end(140, 1, 1, "next", 4),
        ],
        &settings(),
        CLOCK,
    );
    let (request, query, write, next) = (named(&o, "request"), named(&o, "query"), named(&o, "write"), named(&o, "next"));
    assert!(request.parent_span_id.is_empty());
    assert_eq!(query.parent_span_id, request.span_id);
    assert_eq!(write.parent_span_id, request.span_id);
    assert_eq!((&query.trace_id, &write.trace_id), (&request.trace_id, &request.trace_id));
    assert!(next.parent_span_id.is_empty(), "begun after both had ended");
    assert_ne!(next.trace_id, request.trace_id);
    assert_eq!(logs(&o)[0].span_id, request.span_id);
}

#[test]
fn a_sibling_that_ends_as_the_next_begins_is_not_its_parent() {
    let o = map_records(&[begin(10, 1, 1, "a", 1), end(20, 1, 1, "a", 1), begin(20, 1, 1, "b", 2), end(30, 1, 1, "b", 2)], &settings(), CLOCK);
    assert!(named(&o, "b").parent_span_id.is_empty());
}

#[test]
fn a_span_parent_field_wins_over_nesting() {
    let o = map_records(
        &[
            begin(10, 1, 1, "request", 7),
            event(20, 1, 2, "work", &[("span_begin", Value::Unsigned(8)), ("span_parent", Value::Unsigned(7))]),
            end(30, 1, 2, "work", 8),
            end(40, 1, 1, "request", 7),
        ],
        &settings(),
        CLOCK,
    );
    let (request, work) = (named(&o, "request"), named(&o, "work"));
    assert_eq!(work.parent_span_id, request.span_id);
    assert_eq!(work.trace_id, request.trace_id);
    assert_eq!(attr(&work.attributes, "span_parent"), None, "the link is not repeated as an attribute");
}

#[test]
fn spans_of_other_threads_and_completed_spans_are_roots_of_their_own_traces() {
    let o = map_records(
        &[
            begin(10, 1, 1, "a", 1),
            begin(15, 1, 2, "b", 2),
            event(20, 1, 3, "gc_pause", &[("span_start_ns", Value::Unsigned(12)), ("span_duration_ns", Value::Unsigned(5))]),
            end(30, 1, 2, "b", 2),
            end(40, 1, 1, "a", 1),
        ],
        &settings(),
        CLOCK,
    );
    let (a, b, gc) = (named(&o, "a"), named(&o, "b"), named(&o, "gc_pause"));
    assert!(a.parent_span_id.is_empty() && b.parent_span_id.is_empty() && gc.parent_span_id.is_empty());
    assert_ne!(a.trace_id, b.trace_id);
    assert_eq!(gc.span_id, id(1, 0, 3, 12, "gc_pause").span_id());
    assert_eq!(gc.end_time_unix_nano - gc.start_time_unix_nano, 5);
}

#[test]
fn fields_become_typed_attributes_and_an_error_sets_the_status() {
    let o = map_records(
        &[
            event(
                10,
                1,
                1,
                "req",
                &[
                    ("span_begin", Value::Unsigned(1)),
                    ("path", Value::Str("/a".into())),
                    ("n", Value::Signed(-3)),
                    ("big", Value::Unsigned(u64::MAX)),
                    ("ok", Value::Bool(true)),
                    ("ratio", Value::F32(0.5)),
                    ("ms", Value::F64(1.25)),
                    ("raw", Value::Bytes(vec![1, 2])),
                    ("arr", Value::Array(vec![Value::Unsigned(1), Value::Signed(-2)])),
                    ("pt", Value::Struct(vec![("x".into(), Value::Unsigned(7)), ("inner".into(), Value::Struct(vec![("y".into(), Value::Bool(false))]))])),
                ],
            ),
            event(20, 1, 1, "req_error", &[("span_end", Value::Unsigned(1)), ("error", Value::Str("Timeout".into()))]),
        ],
        &settings(),
        CLOCK,
    );
    let s = named(&o, "req");
    let a = &s.attributes;
    assert_eq!(attr(a, "path"), Some(Any::StringValue("/a".into())));
    assert_eq!(attr(a, "n"), Some(Any::IntValue(-3)));
    assert_eq!(attr(a, "big"), Some(Any::StringValue("18446744073709551615".into())));
    assert_eq!(attr(a, "ok"), Some(Any::BoolValue(true)));
    assert_eq!(attr(a, "ratio"), Some(Any::DoubleValue(0.5)));
    assert_eq!(attr(a, "ms"), Some(Any::DoubleValue(1.25)));
    assert_eq!(attr(a, "raw"), Some(Any::BytesValue(vec![1, 2])));
    // An EventHeader array or struct: OTLP's own nested values.
    let int = |i: i64| AnyValue { value: Some(Any::IntValue(i)) };
    assert_eq!(attr(a, "arr"), Some(Any::ArrayValue(ArrayValue { values: vec![int(1), int(-2)] })));
    let kv = |k: &str, v: AnyValue| KeyValue { key: k.into(), value: Some(v), ..Default::default() };
    let inner = AnyValue { value: Some(Any::KvlistValue(KeyValueList { values: vec![kv("y", AnyValue { value: Some(Any::BoolValue(false)) })] })) };
    assert_eq!(attr(a, "pt"), Some(Any::KvlistValue(KeyValueList { values: vec![kv("x", int(7)), kv("inner", inner)] })));
    assert_eq!(attr(a, "thread.name"), Some(Any::StringValue("thread1".into())));
    let status = s.status.clone().expect("a status");
    assert_eq!((status.code, status.message.as_str()), (status::StatusCode::Error as i32, "Timeout"));
}

#[test]
fn events_become_log_records_inside_the_span_open_on_their_thread() {
    let o = map_records(
        &[
            event(5, 1, 1, "boot", &[("version", Value::Unsigned(3))]),
            begin(10, 1, 1, "outer", 1),
            begin(20, 1, 1, "inner", 2),
            end(30, 1, 1, "inner", 2),
            event(35, 1, 1, "cache_miss", &[("key", Value::Str("k".into()))]),
            end(40, 1, 1, "outer", 1),
        ],
        &settings(),
        CLOCK,
    );
    let logs = logs(&o);
    assert_eq!(logs.len(), 2, "span begins and ends are not logs");
    let (boot, miss) = (logs[0], logs[1]);
    assert_eq!((boot.event_name.as_str(), boot.time_unix_nano), ("boot", 1_700_000_000_000_000_005));
    assert_eq!(attr(&boot.attributes, "version"), Some(Any::IntValue(3)));
    assert!(boot.trace_id.is_empty() && boot.span_id.is_empty());
    let outer = named(&o, "outer");
    assert_eq!((&miss.trace_id, &miss.span_id), (&outer.trace_id, &outer.span_id), "inner had ended");
    assert_eq!(attr(&miss.attributes, "key"), Some(Any::StringValue("k".into())));
    assert_eq!(o.log_count(), 2);
    assert_eq!(o.span_count(), 2);
}

#[test]
fn each_process_is_a_resource_with_its_identity() {
    let mut with_ns = event(10, 2, 2, "tick", &[]);
    if let Record::Event(EventRecord { namespaces, .. }) = &mut with_ns {
        *namespaces = Some(Namespaces { pid: 4026531836, mnt: 4026531841, ..Default::default() });
    }
    let mut api_server = process(1, 1, "/usr/bin/api-server", &["api-server", "--port", "80"]);
    if let Record::Process(p) = &mut api_server {
        p.container_id = Some("c0ffee".repeat(10) + "c0de");
        p.pod_uid = Some("1b4f0d2e-7c3a-4e5b-9c2e-0a1b2c3d4e5f".into());
    }
    let records = [api_server, event(10, 1, 1, "tick", &[]), with_ns];
    let o = map_records(&records, &settings(), CLOCK);
    let resources: Vec<&Resource> = o.logs.resource_logs.iter().filter_map(|r| r.resource.as_ref()).collect();
    assert_eq!(resources.len(), 2);
    let keys: Vec<&str> = resources[0].attributes.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "service.name",
            "host.name",
            "process.pid",
            "process.executable.name",
            "process.executable.path",
            "process.command_line",
            "container.id",
            "k8s.pod.uid",
            "deployment.environment"
        ]
    );
    let a = &resources[0].attributes;
    assert_eq!(attr(a, "service.name"), Some(Any::StringValue("api-server".into())));
    assert_eq!(attr(a, "host.name"), Some(Any::StringValue("node-1".into())));
    assert_eq!(attr(a, "process.pid"), Some(Any::IntValue(1)));
    assert_eq!(attr(a, "process.command_line"), Some(Any::StringValue("api-server --port 80".into())));
    assert_eq!(attr(a, "container.id"), Some(Any::StringValue("c0ffee".repeat(10) + "c0de")));
    let b = &resources[1].attributes;
    assert_eq!(attr(b, "service.name"), Some(Any::StringValue("proc2".into())), "no exec seen: the events' process name");
    assert_eq!(attr(b, "linux.namespace.pid"), Some(Any::IntValue(4026531836)));
    assert_eq!(attr(b, "linux.namespace.mnt"), Some(Any::IntValue(4026531841)));
    assert_eq!(attr(b, "linux.namespace.net"), None, "unknown namespaces are left out");
    assert_eq!(attr(a, "k8s.pod.uid"), Some(Any::StringValue("1b4f0d2e-7c3a-4e5b-9c2e-0a1b2c3d4e5f".into())));
    assert_eq!(attr(b, "container.id"), None, "not in a container");
    assert_eq!(attr(b, "k8s.pod.uid"), None, "not in a pod");

    let named_service = ResourceSettings { service_name: Some("checkout".into()), ..settings() };
    let o = map_records(&records, &named_service, CLOCK);
    let services: Vec<Option<Any>> =
        o.logs.resource_logs.iter().map(|r| attr(&r.resource.as_ref().unwrap().attributes, "service.name")).collect();
    assert_eq!(services, [Some(Any::StringValue("checkout".into())), Some(Any::StringValue("checkout".into()))]);
    let from_env = ResourceSettings { attributes: vec![("service.name".into(), "env-svc".into())], ..settings() };
    let o = map_records(&records, &from_env, CLOCK);
    assert_eq!(attr(&o.logs.resource_logs[0].resource.as_ref().unwrap().attributes, "service.name"), Some(Any::StringValue("env-svc".into())));
}

#[test]
fn a_process_that_names_its_service_keeps_its_name_and_attributes_over_the_recorder_s_defaults() {
    let mut front = process(1, 1, "/usr/bin/python3.12", &["python3", "front.py"]);
    if let Record::Process(p) = &mut front {
        p.resource = [("service.name", "front"), ("team", "web"), ("deployment.environment", "staging")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
    }
    let records = [front, event(10, 1, 1, "tick", &[]), event(11, 2, 2, "tick", &[])];
    let defaults = ResourceSettings { service_name: Some("node-default".into()), ..settings() };
    let o = map_records(&records, &defaults, CLOCK);
    let resources: Vec<&Vec<KeyValue>> = o.logs.resource_logs.iter().map(|r| &r.resource.as_ref().unwrap().attributes).collect();
    assert_eq!(attr(resources[0], "service.name"), Some(Any::StringValue("front".into())));
    assert_eq!(attr(resources[0], "team"), Some(Any::StringValue("web".into())));
    assert_eq!(attr(resources[0], "deployment.environment"), Some(Any::StringValue("staging".into())), "its own over the recorder's");
    assert_eq!(resources[0].iter().filter(|a| a.key == "service.name").count(), 1);
    assert_eq!(attr(resources[1], "service.name"), Some(Any::StringValue("node-default".into())), "--service is the default");
    assert_eq!(attr(resources[1], "deployment.environment"), Some(Any::StringValue("test".into())));
}

#[test]
fn the_command_line_is_left_out_when_asked() {
    let records = [process(1, 1, "/usr/bin/db-tool", &["db-tool", "--password", "hunter2"]), event(10, 1, 1, "tick", &[])];
    let without = ResourceSettings { omit_command_line: true, ..settings() };
    let o = map_records(&records, &without, CLOCK);
    let a = &o.logs.resource_logs[0].resource.as_ref().unwrap().attributes;
    assert_eq!(attr(a, "process.command_line"), None);
    assert_eq!(attr(a, "process.executable.path"), Some(Any::StringValue("/usr/bin/db-tool".into())));
}

#[test]
fn batches_hold_open_spans_back_until_their_end_and_keep_their_ids() {
    let records = [
        begin(10, 1, 1, "outer", 1),
        begin(20, 1, 1, "inner", 2),
        end(30, 1, 1, "inner", 2),
        event(35, 1, 1, "note", &[]),
        end(40, 1, 1, "outer", 1),
        begin(50, 1, 1, "tail", 3),
    ];
    let whole = map_records(&records[..5], &settings(), CLOCK);
    let mut mapper = BatchMapper::new(settings(), CLOCK);
    let first = mapper.map_batch(&records[..4]);
    assert_eq!(spans(&first).iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["inner"]);
    assert_eq!(named(&first, "inner"), named(&whole, "inner"), "same ids and parent as in one piece");
    assert_eq!(logs(&first).len(), 1);
    assert_eq!(mapper.open_spans(), 1);
    let second = mapper.map_batch(&records[4..]);
    assert_eq!(named(&second, "outer"), named(&whole, "outer"));
    assert!(logs(&second).is_empty(), "the carried begin is not logged again");
    let last = mapper.finish();
    let tail = named(&last, "tail");
    assert_eq!(attr(&tail.attributes, "unfinished"), Some(Any::StringValue("recording ended".into())));
    assert_eq!(mapper.open_spans(), 0);
}

#[test]
fn a_recording_is_dated_by_its_first_clock_line() {
    use crate::record::ClockRecord;
    let reading = |time_ns, unix_ns| Record::Clock(ClockRecord { time_ns, unix_ns });
    assert_eq!(Clock::of_recording(&[event(10, 1, 1, "tick", &[])]), None, "an older recording has none");
    let records = [event(10, 1, 1, "tick", &[]), reading(1_000, 1_700_000_000_000_000_000), reading(5_000, 42)];
    let clock = Clock::of_recording(&records).unwrap();
    assert_eq!(clock.unix_ns(1_000), 1_700_000_000_000_000_000);
    assert_eq!(clock.unix_ns(2_500), 1_700_000_000_000_001_500);
    // A reading with the wall clock before the monotonic one (a machine
    // with its clock at 1970) dates nothing before the epoch.
    assert_eq!(Clock::from_reading(&ClockRecord { time_ns: 100, unix_ns: 10 }).unix_ns(50), 0);
}

/// A span as OpenTelemetry's user_events trace exporter writes it (the
/// consumer's decoding of it: Part A and Part B are structs), with the ids
/// its SDK gave it.
fn otel_span(t: u64, name: &str, span_id: &str, parent: Option<&str>) -> Record {
    let s = |v: &str| Value::Str(v.into());
    let part_a = vec![
        ("time".to_owned(), s("2026-12-01T06:00:00.000000050Z")),
        ("ext_dt_traceId".to_owned(), s("0af7651916cd43dd8448eb211c80319c")),
        ("ext_dt_spanId".to_owned(), s(span_id)),
    ];
    let mut part_b = vec![
        ("_typeName".to_owned(), s("Span")),
        ("name".to_owned(), s(name)),
        ("startTime".to_owned(), s("2026-12-01T06:00:00.000000010Z")),
    ];
    if let Some(p) = parent {
        part_b.push(("parentId".to_owned(), s(p)));
    }
    let fields = [
        ("PartA", Value::Struct(part_a)),
        ("PartB", Value::Struct(part_b)),
        ("meta.provider", s("Shop")),
        ("meta.event", s("Span")),
    ];
    event(t, 1, 1, "Shop:Span", &fields)
}

/// `record` (an [`otel_span`]) with `value` added to the struct `part`,
/// which is added after the others if it is not there.
fn with_member(record: Record, part: &str, member: &str, value: Value) -> Record {
    let Record::Event(mut e) = record else { unreachable!() };
    if !e.fields.iter().any(|(n, _)| n == part) {
        let at = e.fields.iter().position(|(n, _)| n.starts_with("meta.")).unwrap_or(e.fields.len());
        e.fields.insert(at, (part.to_owned(), Value::Struct(vec![])));
    }
    let Some((_, Value::Struct(members))) = e.fields.iter_mut().find(|(n, _)| n == part) else { unreachable!() };
    members.push((member.to_owned(), value));
    Record::Event(e)
}

/// `record` as a JSON-lines file of 0.1.0 holds it: each struct's members
/// as flat fields named `part.member`.
fn flattened(record: Record) -> Record {
    let Record::Event(mut e) = record else { unreachable!() };
    e.fields = e
        .fields
        .into_iter()
        .flat_map(|(n, v)| match v {
            Value::Struct(members) => members.into_iter().map(|(m, v)| (format!("{n}.{m}"), v)).collect(),
            v => vec![(n, v)],
        })
        .collect();
    Record::Event(e)
}

#[test]
fn an_opentelemetry_span_keeps_the_trace_span_and_parent_ids_its_sdk_gave_it() {
    let o = map_records(
        &[otel_span(100, "charge", "b7ad6b7169203331", Some("00f067aa0ba902b7")), otel_span(120, "checkout", "00f067aa0ba902b7", None)],
        &settings(),
        CLOCK,
    );
    let trace = [0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c];
    let (charge, checkout) = (named(&o, "charge"), named(&o, "checkout"));
    assert_eq!(charge.trace_id, trace);
    assert_eq!(charge.span_id, [0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31]);
    assert_eq!(charge.parent_span_id, [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
    assert_eq!((checkout.trace_id.as_slice(), checkout.span_id.as_slice()), (&trace[..], &charge.parent_span_id[..]));
    assert!(checkout.parent_span_id.is_empty());
    // 40 ns long by its stamps, ending when its event was written.
    assert_eq!((charge.start_time_unix_nano, charge.end_time_unix_nano), (1_700_000_000_000_000_060, 1_700_000_000_000_000_100));
}

#[test]
fn an_opentelemetry_span_with_malformed_ids_gets_derived_ones() {
    let o = map_records(&[otel_span(100, "odd", "not-hex-at-all!!", Some("short"))], &settings(), CLOCK);
    let odd = named(&o, "odd");
    assert_eq!(odd.span_id, id(1, 0, 1, 60, "odd").span_id());
    assert!(odd.parent_span_id.is_empty());
}

#[test]
fn an_opentelemetry_span_its_sdk_marked_failed_gets_an_error_status() {
    let with = |extra: &[(&str, Value)]| {
        let span = extra.iter().fold(otel_span(100, "charge", "b7ad6b7169203331", None), |r, (m, v)| with_member(r, "PartB", m, v.clone()));
        let nested = named(&map_records(std::slice::from_ref(&span), &settings(), CLOCK), "charge").status.clone();
        let flat = named(&map_records(&[flattened(span)], &settings(), CLOCK), "charge").status.clone();
        assert_eq!(nested, flat, "a flat file of 0.1.0 reads alike");
        nested
    };
    let failed = with(&[("success", Value::Bool(false)), ("statusMessage", Value::Str("card declined".into()))]).unwrap();
    assert_eq!((failed.code, failed.message.as_str()), (status::StatusCode::Error as i32, "card declined"));
    let http = with(&[("success", Value::Bool(false)), ("httpStatusCode", Value::Signed(503))]).unwrap();
    assert_eq!((http.code, http.message.as_str()), (status::StatusCode::Error as i32, "HTTP 503"));
    assert_eq!(with(&[("success", Value::Bool(true))]), None);
    assert_eq!(with(&[]), None);
}

#[test]
fn an_opentelemetry_span_keeps_its_sdk_attribute_names_and_kind_not_its_envelope() {
    let mut span = otel_span(100, "charge", "b7ad6b7169203331", None);
    span = with_member(span, "PartB", "kind", Value::Unsigned(2));
    span = with_member(span, "PartB", "success", Value::Bool(true));
    span = with_member(span, "PartA", "ext_cloud_role", Value::Str("shop".into()));
    span = with_member(span, "PartC", "amount", Value::F64(12.5));
    let items = Value::Array(vec![Value::Str("a".into()), Value::Str("b".into())]);
    span = with_member(span, "PartC", "items", items);
    for (form, record) in [("nested", span.clone()), ("flat, as 0.1.0 wrote it", flattened(span))] {
        let o = map_records(&[record], &settings(), CLOCK);
        let charge = named(&o, "charge");
        assert_eq!(charge.kind, span::SpanKind::Client as i32, "{form}");
        let keys: Vec<&str> = charge.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, ["amount", "items", "PartA.ext_cloud_role", "thread.id", "thread.name"], "{form}");
        // An array attribute stays an array.
        let strings = |v: &[&str]| v.iter().map(|s| AnyValue { value: Some(Any::StringValue((*s).into())) }).collect();
        assert_eq!(attr(&charge.attributes, "items"), Some(Any::ArrayValue(ArrayValue { values: strings(&["a", "b"]) })), "{form}");
    }
}

#[test]
fn a_span_with_scheduler_records_says_where_its_time_went_and_they_are_no_log_records() {
    let mut write = waking(50, 30, 31, 10);
    if let Record::Event(e) = &mut write {
        (e.comm, e.process) = ("writer-main".into(), "writer".into());
    }
    let records = [
        switch(0, 0, R, 10),
        begin(10, 10, 10, "read_pipe", 1),
        switch(20, 10, S, 0),
        write,
        switch(60, 0, R, 10),
        migrate(65, 10),
        end(70, 10, 10, "read_pipe", 1),
        begin(80, 20, 20, "elsewhere", 1),
        end(90, 20, 20, "elsewhere", 1),
    ];
    let o = map_records(&records, &settings(), CLOCK);
    assert_eq!(o.log_count(), 0);
    let span = named(&o, "read_pipe");
    let expected = [
        ("usertrace.sched.on_cpu_ns", Any::IntValue(20)),
        ("usertrace.sched.runnable_ns", Any::IntValue(10)),
        ("usertrace.sched.sleeping_ns", Any::IntValue(30)),
        ("usertrace.sched.uninterruptible_ns", Any::IntValue(0)),
        ("usertrace.sched.context_switches", Any::IntValue(1)),
        ("usertrace.sched.migrations", Any::IntValue(1)),
        ("usertrace.sched.top_waker", Any::StringValue("writer (30) / writer-main (31), 1 time".into())),
    ];
    for (key, value) in expected {
        assert_eq!(attr(&span.attributes, key), Some(value), "{key}");
    }
    for key in ["usertrace.sched.unknown_ns", "usertrace.sched.other_blocked_ns", "usertrace.sched.ended_on_another_thread"] {
        assert_eq!(attr(&span.attributes, key), None, "{key}");
    }
    // A span whose thread the scheduler records never name has none.
    assert!(named(&o, "elsewhere").attributes.iter().all(|a| !a.key.starts_with("usertrace.sched.")));
    // Nor has any span of a recording without them.
    let plain = map_records(&mixed(), &settings(), CLOCK);
    assert!(spans(&plain).iter().flat_map(|s| &s.attributes).all(|a| !a.key.starts_with("usertrace.sched.")));
}

#[test]
fn a_live_batch_of_scheduler_records_sends_no_log_records() {
    let mut mapper = BatchMapper::new(settings(), CLOCK);
    let (before, after) = (
        [switch(0, 0, R, 10), begin(10, 10, 10, "live", 1), switch(20, 10, S, 0)],
        [waking(30, 5, 5, 10), switch(40, 0, R, 10), end(50, 10, 10, "live", 1)],
    );
    let first = mapper.map_batch(&before);
    assert_eq!((first.span_count(), first.log_count()), (0, 0));
    let second = mapper.map_batch(&after);
    assert_eq!((second.span_count(), second.log_count()), (1, 0));
    // The batch before is carried with the open span: its sleep from 20 is
    // known, as in the recording mapped whole.
    let live = &named(&second, "live").attributes;
    assert_eq!(attr(live, "usertrace.sched.sleeping_ns"), Some(Any::IntValue(10)));
    assert_eq!(attr(live, "usertrace.sched.runnable_ns"), Some(Any::IntValue(10)));
    assert_eq!(attr(live, "usertrace.sched.unknown_ns"), None);
    let whole = map_records(&[before.to_vec(), after.to_vec()].concat(), &settings(), CLOCK);
    assert_eq!(live, &named(&whole, "live").attributes);
}

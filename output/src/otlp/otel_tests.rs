use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::trace::v1::{span, status, Status};
use usertrace::otel_span::{split, OTLP_PART_FIELD, PART_LEN};

use super::*;
use crate::otlp::live::BatchMapper;
use crate::otlp::mapping::{map_records, Otlp, ResourceSettings};
use crate::test_records::event;

const CLOCK: Clock = Clock { unix_minus_monotonic_ns: 1_700_000_000_000_000_000 };
const TRACE: u128 = 0x0af7651916cd43dd8448eb211c80319c;

/// A span as an SDK makes it: an attribute of `attribute_len` bytes, an
/// event, a link, a kind, a status, a tracestate.
fn sdk_span(span_id: u64, attribute_len: usize) -> Span {
    let string = |s: String| Some(AnyValue { value: Some(any_value::Value::StringValue(s)) });
    Span {
        trace_id: TRACE.to_be_bytes().to_vec(),
        span_id: span_id.to_be_bytes().to_vec(),
        parent_span_id: 7u64.to_be_bytes().to_vec(),
        trace_state: "vendor=x".into(),
        flags: 0x301,
        name: "GET /users".into(),
        kind: span::SpanKind::Server as i32,
        start_time_unix_nano: 1_765_000_000_000_000_000,
        end_time_unix_nano: 1_765_000_000_000_500_000,
        attributes: vec![KeyValue { key: "big".into(), value: string("x".repeat(attribute_len)), ..Default::default() }],
        events: vec![span::Event { time_unix_nano: 1_765_000_000_000_100_000, name: "exception".into(), ..Default::default() }],
        links: vec![span::Link { trace_id: vec![1; 16], span_id: vec![2; 8], ..Default::default() }],
        status: Some(Status { message: "boom".into(), code: status::StatusCode::Error as i32 }),
        ..Default::default()
    }
}

/// The events an exporter writes for `span` (parts first, head last),
/// from t = 100 on, on pid 1.
fn events_of(span: &Span, span_id: u64) -> Vec<Record> {
    let otlp = span.encode_to_vec();
    let chunks = split(&otlp).unwrap();
    let parts = chunks.len() as u64;
    let mut out: Vec<Record> = (1..chunks.len())
        .map(|i| {
            let fields = [
                (OTLP_SPAN_PART_FIELD, Value::Unsigned(span_id)),
                (OTLP_PART_FIELD, Value::Unsigned(i as u64)),
                (OTLP_PARTS_FIELD, Value::Unsigned(parts)),
                (OTLP_SPAN_FIELD, Value::Bytes(chunks[i].to_vec())),
            ];
            event(100 + i as u64, 1, 1, "app_otel_span_part", &fields)
        })
        .collect();
    out.push(head(span_id, parts, chunks[0]));
    out
}

fn head(span_id: u64, parts: u64, first: &[u8]) -> Record {
    let fields = [
        ("span_start_ns", Value::Unsigned(1_000)),
        ("span_duration_ns", Value::Unsigned(500)),
        (TRACE_ID_HI_FIELD, Value::Unsigned((TRACE >> 64) as u64)),
        (TRACE_ID_LO_FIELD, Value::Unsigned(TRACE as u64)),
        (SPAN_ID_FIELD, Value::Unsigned(span_id)),
        (PARENT_SPAN_ID_FIELD, Value::Unsigned(7)),
        ("name", Value::Str("GET /users".into())),
        (SCOPE_NAME_FIELD, Value::Str("opentelemetry.instrumentation.flask".into())),
        (SCOPE_VERSION_FIELD, Value::Str("0.50b0".into())),
        (STATUS_CODE_FIELD, Value::Unsigned(u64::from(usertrace::otel_span::STATUS_CODE_ERROR))),
        (OTLP_PARTS_FIELD, Value::Unsigned(parts)),
        (OTLP_SPAN_FIELD, Value::Bytes(first.to_vec())),
    ];
    event(10_000, 1, 1, "app_otel_span", &fields)
}

fn only_span(o: &Otlp) -> (&Span, &InstrumentationScope) {
    let groups: Vec<_> = o.traces.resource_spans.iter().flat_map(|r| &r.scope_spans).collect();
    assert_eq!(groups.len(), 1, "{o:#?}");
    assert_eq!(groups[0].spans.len(), 1, "{o:#?}");
    (&groups[0].spans[0], groups[0].scope.as_ref().unwrap())
}

fn loss(s: &Span) -> Option<String> {
    s.attributes.iter().find(|a| a.key == LOSS_ATTRIBUTE).and_then(|a| match a.value.as_ref()?.value.as_ref()? {
        Any::StringValue(s) => Some(s.clone()),
        _ => None,
    })
}

#[test]
fn a_small_span_is_exported_exactly_as_the_sdk_made_it_under_its_scope() {
    let sdk = sdk_span(42, 10);
    let o = map_records(&events_of(&sdk, 42), &ResourceSettings::default(), CLOCK);
    let (span, scope) = only_span(&o);
    assert_eq!(span, &sdk);
    assert_eq!((scope.name.as_str(), scope.version.as_str()), ("opentelemetry.instrumentation.flask", "0.50b0"));
    assert_eq!(o.log_count(), 0, "no part becomes a log record");
}

#[test]
fn a_span_with_a_20_kib_attribute_arrives_whole_in_order_and_out_of_order() {
    let sdk = sdk_span(42, 20 * 1024);
    let mut records = events_of(&sdk, 42);
    assert!(records.len() >= 4, "{} events", records.len());
    assert_eq!(only_span(&map_records(&records, &ResourceSettings::default(), CLOCK)).0, &sdk);
    let head = records.pop().unwrap();
    records.reverse();
    records.push(head);
    assert_eq!(only_span(&map_records(&records, &ResourceSettings::default(), CLOCK)).0, &sdk);
}

#[test]
fn parts_in_one_batch_and_the_head_in_the_next_join_in_the_live_mapper() {
    let sdk = sdk_span(42, 3 * PART_LEN);
    let records = events_of(&sdk, 42);
    let mut mapper = BatchMapper::new(ResourceSettings::default(), CLOCK);
    let first = mapper.map_batch(&records[..records.len() - 1]);
    assert_eq!((first.span_count(), first.log_count()), (0, 0));
    assert_eq!(only_span(&mapper.map_batch(&records[records.len() - 1..])).0, &sdk);
}

#[test]
fn a_missing_part_exports_the_span_from_its_fields_marked_with_the_loss() {
    let sdk = sdk_span(42, 3 * PART_LEN);
    let mut records = events_of(&sdk, 42);
    records.remove(1);
    let o = map_records(&records, &ResourceSettings::default(), CLOCK);
    let (span, _) = only_span(&o);
    assert_eq!((span.trace_id.as_slice(), span.span_id.as_slice()), (&TRACE.to_be_bytes()[..], &42u64.to_be_bytes()[..]));
    assert_eq!(span.parent_span_id, 7u64.to_be_bytes());
    assert_eq!((span.name.as_str(), span.start_time_unix_nano, span.end_time_unix_nano), ("GET /users", CLOCK.unix_ns(1_000), CLOCK.unix_ns(1_500)));
    assert_eq!(loss(span).unwrap().split(';').next(), Some("1 of 4 parts of the OTLP span were lost"));
    assert_eq!(span.status.as_ref().map(|s| s.code), Some(status::StatusCode::Error as i32), "the readable status_code");
}

#[test]
fn a_span_lost_with_an_unset_status_is_exported_with_none() {
    assert_eq!(readable_status(0), None);
    assert_eq!(readable_status(1).map(|s| s.code), Some(status::StatusCode::Ok as i32));
}

#[test]
fn a_protobuf_that_does_not_decode_is_a_named_loss_and_the_next_span_still_arrives() {
    let mut records = vec![head(41, 1, &[0xff, 0xff, 0xff])];
    records.extend(events_of(&sdk_span(42, 10), 42));
    let o = map_records(&records, &ResourceSettings::default(), CLOCK);
    let spans: Vec<&Span> = o.traces.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans).collect();
    assert_eq!(spans.len(), 2);
    assert!(loss(spans[0]).unwrap().starts_with("the otlp_span field is not an OTLP protobuf"), "{:?}", loss(spans[0]));
    assert_eq!(spans[1], &sdk_span(42, 10));
}

#[test]
fn a_head_whose_parts_lie_about_their_count_is_marked() {
    let mut records = events_of(&sdk_span(42, 2 * PART_LEN), 42);
    if let Record::Event(e) = &mut records[0] {
        e.fields[2].1 = Value::Unsigned(9);
    }
    let o = map_records(&records, &ResourceSettings::default(), CLOCK);
    assert!(loss(only_span(&o).0).unwrap().contains("do not agree on their count"));
}

#[test]
fn parts_whose_head_never_comes_are_evicted_and_counted() {
    let mut r = Reassembler::default();
    for id in 0..(MAX_OPEN as u64 + 10) {
        let fields = [
            (OTLP_SPAN_PART_FIELD, Value::Unsigned(id)),
            (OTLP_PART_FIELD, Value::Unsigned(1)),
            (OTLP_PARTS_FIELD, Value::Unsigned(2)),
            (OTLP_SPAN_FIELD, Value::Bytes(vec![0; 10])),
        ];
        assert!(r.take(&[event(id, 1, 1, "app_otel_span_part", &fields)]).is_empty());
    }
    assert_eq!((r.open(), r.evicted()), (MAX_OPEN, 10));
}

/// A log record as an SDK makes it, with a body of `body_len` bytes.
fn sdk_log(body_len: usize) -> LogRecord {
    LogRecord {
        time_unix_nano: 1_765_000_000_000_000_000,
        observed_time_unix_nano: 1_765_000_000_000_000_001,
        severity_number: 17,
        severity_text: "ERROR".into(),
        body: Some(AnyValue { value: Some(any_value::Value::StringValue("b".repeat(body_len))) }),
        attributes: vec![KeyValue { key: "code.function".into(), value: None, ..Default::default() }],
        trace_id: TRACE.to_be_bytes().to_vec(),
        span_id: 42u64.to_be_bytes().to_vec(),
        flags: 1,
        ..Default::default()
    }
}

/// The events a log exporter writes for `log` (parts first, head last).
fn log_events(otlp: &[u8], log_id: u64) -> Vec<Record> {
    let chunks = split(otlp).unwrap();
    let parts = chunks.len() as u64;
    let mut out: Vec<Record> = (1..chunks.len())
        .map(|i| {
            let fields = [
                (OTLP_LOG_PART_FIELD, Value::Unsigned(log_id)),
                (OTLP_PART_FIELD, Value::Unsigned(i as u64)),
                (OTLP_PARTS_FIELD, Value::Unsigned(parts)),
                (OTLP_LOG_FIELD, Value::Bytes(chunks[i].to_vec())),
            ];
            event(100 + i as u64, 1, 1, "app_otel_log_part", &fields)
        })
        .collect();
    let fields = [
        (TRACE_ID_HI_FIELD, Value::Unsigned((TRACE >> 64) as u64)),
        (TRACE_ID_LO_FIELD, Value::Unsigned(TRACE as u64)),
        (SPAN_ID_FIELD, Value::Unsigned(42)),
        (SEVERITY_NUMBER_FIELD, Value::Unsigned(17)),
        ("body", Value::Str("b".into())),
        (SCOPE_NAME_FIELD, Value::Str("app.logger".into())),
        (SCOPE_VERSION_FIELD, Value::Str(String::new())),
        (LOG_ID_FIELD, Value::Unsigned(log_id)),
        (OTLP_PARTS_FIELD, Value::Unsigned(parts)),
        (OTLP_LOG_FIELD, Value::Bytes(chunks[0].to_vec())),
    ];
    out.push(event(10_000, 1, 1, "app_otel_log", &fields));
    out
}

fn only_log(o: &Otlp) -> (&LogRecord, &InstrumentationScope) {
    let groups: Vec<_> = o.logs.resource_logs.iter().flat_map(|r| &r.scope_logs).collect();
    assert_eq!((groups.len(), o.log_count(), o.span_count()), (1, 1, 0), "{o:#?}");
    (&groups[0].log_records[0], groups[0].scope.as_ref().unwrap())
}

#[test]
fn log_records_small_and_cut_into_parts_are_exported_exactly_under_their_scope() {
    for body_len in [10, 3 * PART_LEN] {
        let sdk = sdk_log(body_len);
        let o = map_records(&log_events(&sdk.encode_to_vec(), 9), &ResourceSettings::default(), CLOCK);
        let (log, scope) = only_log(&o);
        assert_eq!(log, &sdk, "a body of {body_len} bytes");
        assert_eq!(scope.name, "app.logger");
    }
}

#[test]
fn a_log_record_that_does_not_decode_keeps_its_readable_fields_and_names_the_loss() {
    let o = map_records(&log_events(&[0xff, 0xff], 9), &ResourceSettings::default(), CLOCK);
    let (log, _) = only_log(&o);
    assert_eq!((log.severity_number, log.span_id.as_slice(), log.time_unix_nano), (17, &42u64.to_be_bytes()[..], CLOCK.unix_ns(10_000)));
    let loss = log.attributes.iter().find(|a| a.key == LOSS_ATTRIBUTE).and_then(|a| a.value.clone()).and_then(|v| v.value);
    assert!(matches!(loss, Some(Any::StringValue(s)) if s.starts_with("the otlp_log field is not an OTLP protobuf")));
}

#[test]
fn a_span_joined_from_parts_counts_every_event_it_was_made_of() {
    let records = events_of(&sdk_span(42, 3 * PART_LEN), 42);
    assert_eq!(records.len(), 4);
    let mapped = BatchMapper::new(ResourceSettings::default(), CLOCK).map_batch_items(&records);
    assert_eq!(mapped.events(), 4);
    let mut lost_one = records.clone();
    lost_one.remove(0);
    assert_eq!(BatchMapper::new(ResourceSettings::default(), CLOCK).map_batch_items(&lost_one).events(), 3);
}

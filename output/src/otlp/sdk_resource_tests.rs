use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use usertrace::otel_span::{
    OTLP_PARTS_FIELD, OTLP_SPAN_FIELD, SCOPE_NAME_FIELD, SCOPE_VERSION_FIELD, SPAN_ID_FIELD,
    STATUS_CODE_FIELD,
};
use usertrace::span::{PARENT_SPAN_ID_FIELD, TRACE_ID_HI_FIELD, TRACE_ID_LO_FIELD};

use super::*;
use crate::otlp::live::BatchMapper;
use crate::otlp::mapping::{map_records, Clock, Otlp, ResourceSettings};
use crate::record::ProcessRecord;
use crate::test_records::{event, exit};
use crate::timeline::Timeline;

const CLOCK: Clock = Clock {
    unix_minus_monotonic_ns: 1_700_000_000_000_000_000,
};

fn text(s: &str) -> Option<AnyValue> {
    Some(AnyValue {
        value: Some(any_value::Value::StringValue(s.into())),
    })
}

fn kv(key: &str, value: Option<AnyValue>) -> KeyValue {
    KeyValue {
        key: key.into(),
        value,
        ..Default::default()
    }
}

/// A resource as an SDK builds it: typed attributes, in its order.
fn sdk_resource(service: &str) -> Resource {
    Resource {
        attributes: vec![
            kv("service.name", text(service)),
            kv(
                "custom.tier",
                Some(AnyValue {
                    value: Some(any_value::Value::IntValue(3)),
                }),
            ),
            kv("telemetry.sdk.language", text("python")),
        ],
        ..Default::default()
    }
}

fn resource_event(t: u64, pid: u32, service: &str, otlp: Vec<u8>) -> Record {
    event(
        t,
        pid,
        pid,
        "app_otel_resource",
        &[
            (SERVICE_NAME_FIELD, Value::Str(service.into())),
            (OTLP_RESOURCE_FIELD, Value::Bytes(otlp)),
        ],
    )
}

/// A whole SDK span (one part) from `pid` at `t`.
fn span_head(t: u64, pid: u32, span_id: u64) -> Record {
    let span = Span {
        trace_id: vec![9; 16],
        span_id: span_id.to_be_bytes().to_vec(),
        name: "work".into(),
        ..Default::default()
    };
    let fields = [
        ("span_start_ns", Value::Unsigned(t)),
        ("span_duration_ns", Value::Unsigned(10)),
        (TRACE_ID_HI_FIELD, Value::Unsigned(0x0909_0909_0909_0909)),
        (TRACE_ID_LO_FIELD, Value::Unsigned(0x0909_0909_0909_0909)),
        (SPAN_ID_FIELD, Value::Unsigned(span_id)),
        (PARENT_SPAN_ID_FIELD, Value::Unsigned(0)),
        ("name", Value::Str("work".into())),
        (SCOPE_NAME_FIELD, Value::Str("app".into())),
        (SCOPE_VERSION_FIELD, Value::Str(String::new())),
        (STATUS_CODE_FIELD, Value::Unsigned(0)),
        (OTLP_PARTS_FIELD, Value::Unsigned(1)),
        (OTLP_SPAN_FIELD, Value::Bytes(span.encode_to_vec())),
    ];
    event(t, pid, pid, "app_otel_span", &fields)
}

/// Process `pid`, /usr/bin/python3, whose environment said
/// `service.name=from-env` and `team=env`.
fn process_with_environment(pid: u32) -> Record {
    Record::Process(ProcessRecord {
        time_ns: 1,
        pid,
        executable: Some("/usr/bin/python3".into()),
        command_line: Some(vec!["python3".into(), "app.py".into()]),
        container_id: None,
        resource: [
            ("service.name".to_owned(), "from-env".to_owned()),
            ("team".to_owned(), "env".to_owned()),
        ]
        .into(),
        pod_uid: None,
        pid_in_container: None,
    })
}

/// The resource of the one `ResourceSpans` of `o`.
fn only_resource(o: &Otlp) -> &Resource {
    assert_eq!(o.traces.resource_spans.len(), 1, "{o:#?}");
    o.traces.resource_spans[0].resource.as_ref().unwrap()
}

fn keys(r: &Resource) -> Vec<&str> {
    r.attributes.iter().map(|a| a.key.as_str()).collect()
}

#[test]
fn the_sdk_s_resource_wins_over_the_environment_s_and_keeps_the_recorder_s_own_attributes_after_it()
{
    let records = [
        process_with_environment(7),
        resource_event(5, 7, "checkout", sdk_resource("checkout").encode_to_vec()),
        span_head(10, 7, 1),
    ];
    let settings = ResourceSettings {
        host_name: "node-1".into(),
        ..ResourceSettings::default()
    };
    let o = map_records(&records, &settings, CLOCK);
    let resource = only_resource(&o);
    assert_eq!(
        resource.attributes[..3],
        sdk_resource("checkout").attributes[..],
        "exactly the SDK's, typed, first"
    );
    assert_eq!(
        keys(resource)[3..],
        [
            "host.name",
            "process.pid",
            "process.executable.name",
            "process.executable.path",
            "process.command_line"
        ]
    );
    assert_eq!(o.log_count(), 0, "the resource event is no log record");
}

#[test]
fn a_resource_written_after_a_span_of_the_same_batch_still_names_it() {
    let records = [
        process_with_environment(7),
        span_head(10, 7, 1),
        resource_event(20, 7, "checkout", sdk_resource("checkout").encode_to_vec()),
    ];
    let o = BatchMapper::new(ResourceSettings::default(), CLOCK).map_batch(&records);
    assert_eq!(
        only_resource(&o).attributes[0],
        kv("service.name", text("checkout"))
    );
}

#[test]
fn the_latest_resource_of_a_process_names_its_later_batches() {
    let mut mapper = BatchMapper::new(ResourceSettings::default(), CLOCK);
    let first = mapper.map_batch(&[
        process_with_environment(7),
        resource_event(5, 7, "a", sdk_resource("a").encode_to_vec()),
        span_head(10, 7, 1),
    ]);
    assert_eq!(
        only_resource(&first).attributes[0],
        kv("service.name", text("a"))
    );
    let second = mapper.map_batch(&[
        resource_event(15, 7, "b", sdk_resource("b").encode_to_vec()),
        span_head(20, 7, 2),
    ]);
    assert_eq!(
        only_resource(&second).attributes[0],
        kv("service.name", text("b"))
    );
    let third = mapper.map_batch(&[span_head(30, 7, 3)]);
    assert_eq!(
        only_resource(&third).attributes[0],
        kv("service.name", text("b")),
        "kept for batches without one"
    );
}

#[test]
fn bad_bytes_leave_the_environment_s_resource_and_are_counted_and_named() {
    let mut mapper = BatchMapper::new(ResourceSettings::default(), CLOCK);
    let o = mapper.map_batch(&[
        process_with_environment(7),
        resource_event(5, 7, "x", vec![0x0f, 0xff]),
        span_head(10, 7, 1),
    ]);
    let resource = only_resource(&o);
    assert_eq!(resource.attributes[0], kv("service.name", text("from-env")));
    assert!(keys(resource).contains(&"team"), "{resource:?}");
    assert_eq!(mapper.sdk_resources().undecodable(), 1);
    let said = mapper
        .sdk_resources()
        .first_undecodable()
        .unwrap()
        .to_string();
    assert!(
        said.starts_with("process 7 wrote an otlp_resource field that is not an OTLP Resource"),
        "{said}"
    );
    assert!(mapper.sdk_resources().is_empty());
}

#[test]
fn a_process_s_resource_is_forgotten_with_it() {
    let mut mapper = BatchMapper::new(ResourceSettings::default(), CLOCK);
    mapper.map_batch(&[
        process_with_environment(7),
        resource_event(5, 7, "a", sdk_resource("a").encode_to_vec()),
        span_head(10, 7, 1),
    ]);
    assert_eq!(mapper.sdk_resources().len(), 1);
    mapper.map_batch(&[exit(20, 7, 7)]);
    assert_eq!(mapper.sdk_resources().len(), 0);
}

#[test]
fn the_timeline_shows_the_process_by_its_sdk_s_service_name_and_no_instant_for_it() {
    let records = [
        process_with_environment(7),
        resource_event(5, 7, "checkout", sdk_resource("checkout").encode_to_vec()),
        span_head(10, 7, 1),
    ];
    let timeline = Timeline::build(&records);
    assert_eq!(timeline.processes[&7].shown_name(), "checkout (python3)");
    assert!(timeline.instants.is_empty(), "{:?}", timeline.instants);
}

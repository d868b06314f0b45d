//! A log record through the OpenTelemetry SDK and its user_events exporter
//! (the `otel_logs_producer` example), selected by provider and level up
//! to Error: it decodes to exactly what the exporter wrote (Common Schema
//! PartA/PartB/PartC structs), and field by field to what
//! `tracepoint_decode`'s own JSON gives for the same raw bytes.

use std::borrow::Cow;

use usertrace_consumer::{FieldValue, Session};

use crate::consumer_support::*;
use crate::eventheader_support::*;

#[test]
fn an_opentelemetry_log_reads_field_by_field_as_tracepoint_decode_reads_it() {
    let mut session = Session::open(&options("UsertraceOtel:L2K1")).unwrap();
    let mut producer = start_example("otel_logs_producer", None);
    let rec = record_until_exit(&mut session, &mut producer.child);
    assert_eq!(rec.stats.lost_total(), 0);

    assert_eq!(rec.events.len(), 1, "{:?}", rec.outputs);
    let e = &rec.events[0];
    assert_eq!(e.name(), "UsertraceOtel_L2K1");
    assert_eq!((e.pid, e.tid), (producer.pid, producer.pid));
    assert_eq!(&*e.process, "otel_logs_produ");
    let fields = e.fields().unwrap();
    library_json::assert_same_as_library(&fields, &library_json::library_fields(&e.format, &e.raw));

    let s = |v: &str| FieldValue::Str(Cow::Owned(v.to_owned()));
    let got: Vec<(&str, &FieldValue<'_>)> = fields.iter().map(|(n, v)| (n.as_ref(), v)).collect();
    let part = |members: &[(&'static str, FieldValue<'static>)]| {
        FieldValue::Struct(members.iter().map(|(n, v)| (Cow::Borrowed(*n), v.clone())).collect())
    };
    let expected = [
        ("__csver__", FieldValue::Unsigned(0x400)),
        (
            "PartA",
            part(&[
                ("time", s("2023-11-14T22:13:20Z")),
                // The SDK's default service.name, which the exporter sends as the cloud role.
                ("ext_cloud_role", s("unknown_service:otel_logs_producer")),
            ]),
        ),
        ("PartC", part(&[("user_id", FieldValue::Signed(42)), ("amount", FieldValue::F64(12.5)), ("ok", FieldValue::Bool(false))])),
        (
            "PartB",
            part(&[
                ("_typeName", s("Log")),
                ("body", s("payment declined")),
                ("severityNumber", FieldValue::Signed(17)),
                ("severityText", s("ERROR")),
                ("name", s("Checkout")),
            ]),
        ),
        ("meta.provider", s("UsertraceOtel")),
        ("meta.event", s("Log")),
        ("meta.level", FieldValue::Unsigned(2)),
        ("meta.keyword", FieldValue::Unsigned(1)),
        ("meta.flags", FieldValue::Unsigned(7)),
    ];
    let expected: Vec<(&str, &FieldValue<'_>)> = expected.iter().map(|(n, v)| (*n, v)).collect();
    assert_eq!(got, expected);
}

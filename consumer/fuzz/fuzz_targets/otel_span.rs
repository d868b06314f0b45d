//! Arbitrary OpenTelemetry span events (the core's `usertrace::otel_span`
//! rule): heads and parts with any ids, indexes, counts and bytes, in any
//! order. The recorder's reassembly and OTLP mapping must answer, never
//! panic, and export exactly one span per head: whole, or marked.
//!
//! Input: a list of events, each a kind byte (even: a part, odd: a head),
//! then the span id, part index (a head's status code) and part count (one byte each), a length
//! byte and that many bytes of protobuf.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace::otel_span::{
    OTLP_PARTS_FIELD, OTLP_PART_FIELD, OTLP_SPAN_FIELD, OTLP_SPAN_PART_FIELD, SCOPE_NAME_FIELD, SCOPE_VERSION_FIELD, SPAN_ID_FIELD,
    STATUS_CODE_FIELD,
};
use usertrace_output::otlp::{map_records, Clock, ResourceSettings};
use usertrace_output::record::{EventRecord, Record, Value};

fn event(t: u64, fields: Vec<(&str, Value)>) -> Record {
    Record::Event(EventRecord {
        time_ns: t,
        cpu: 0,
        pid: 1,
        tid: 1,
        comm: "app".into(),
        process: "app".into(),
        namespaces: None,
        event: "app_otel_span".into(),
        tracepoint: None,
        fields: fields.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
        error: None,
        stack: Vec::new(),
    })
}

fuzz_target!(|data: &[u8]| {
    let mut records = Vec::new();
    let mut heads = 0;
    let mut rest = data;
    while let [kind, id, index, parts, len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (bytes, after) = tail.split_at(len);
        rest = after;
        let (id, t) = (u64::from(*id), records.len() as u64 + 1);
        let record = if kind % 2 == 0 {
            event(t, vec![
                (OTLP_SPAN_PART_FIELD, Value::Unsigned(id)),
                (OTLP_PART_FIELD, Value::Unsigned(u64::from(*index))),
                (OTLP_PARTS_FIELD, Value::Unsigned(u64::from(*parts))),
                (OTLP_SPAN_FIELD, Value::Bytes(bytes.to_vec())),
            ])
        } else {
            heads += 1;
            event(t, vec![
                ("span_start_ns", Value::Unsigned(t)),
                ("span_duration_ns", Value::Unsigned(1)),
                ("trace_id_hi", Value::Unsigned(1)),
                ("trace_id_lo", Value::Unsigned(2)),
                (SPAN_ID_FIELD, Value::Unsigned(id)),
                ("parent_span_id", Value::Unsigned(0)),
                ("name", Value::Str("s".into())),
                (SCOPE_NAME_FIELD, Value::Str("scope".into())),
                (SCOPE_VERSION_FIELD, Value::Str(String::new())),
                // A head's index byte is its status: any code, valid or not.
                (STATUS_CODE_FIELD, Value::Unsigned(u64::from(*index))),
                (OTLP_PARTS_FIELD, Value::Unsigned(u64::from(*parts))),
                (OTLP_SPAN_FIELD, Value::Bytes(bytes.to_vec())),
            ])
        };
        records.push(record);
    }
    let clock = Clock { unix_minus_monotonic_ns: 0 };
    let otlp = map_records(&records, &ResourceSettings::default(), clock);
    assert_eq!(otlp.span_count(), heads, "one span per head, whole or marked");
    assert_eq!(otlp.log_count(), 0, "a part is never a log record");
});

//! What a session yields, as the neutral records every output of
//! `usertrace_output` takes (with the `output` feature): the one place an
//! [`Output`] becomes a [`Record`], and an [`Event`] its JSON line, for the
//! CLI's live outputs, its archive readers and anyone else's.

use std::borrow::Cow;

use crate::eventheader::is_eventheader;
use crate::{DecodeError, Event, Field, FieldValue, Output};
use usertrace::{EVENTHEADER_EVENT_FIELD, EVENTHEADER_PROVIDER_FIELD};
use usertrace_output::jsonl::{write_json_line, EventLine, FieldRefs, NamespacesJsonCache};
use usertrace_output::{EventRecord, ExitRecord, LostRecord, Namespaces, ProcessRecord, Record, StackFrame, Value, ValueRef};

/// The record for `output`; `None` for what is no part of a recording
/// (a tracepoint being attached, a process that cannot be recorded).
pub fn to_record(output: Output) -> Option<Record> {
    match output {
        Output::Event(event) => Some(Record::Event(event_record(&event))),
        Output::Lost { cpu, time_ns, count, sideband, .. } => Some(Record::Lost(LostRecord { time_ns, cpu, count, sideband })),
        Output::Process { time_ns, pid, info } => Some(Record::Process(ProcessRecord {
            time_ns,
            pid,
            executable: info.executable,
            command_line: info.command_line,
            container_id: info.container_id,
            pod_uid: info.pod_uid,
            pid_in_container: info.pid_in_container,
            resource: info.resource,
        })),
        Output::Exit { time_ns, pid, tid } => Some(Record::Exit(ExitRecord { time_ns, pid, tid })),
        Output::Attached { .. } | Output::NotRecorded(_) => None,
    }
}

/// The one field of an undecodable EventHeader event: its payload's bytes.
pub const UNDECODABLE_FIELD: &str = "raw";

/// `event`'s fields as its line and record hold them, borrowed from
/// `decoded` (which is `event.fields()`), and why it could not be decoded.
/// They are handed out one by one, so that writing a line needs no vector
/// of them on top of the decoder's.
fn fields_of<'a>(
    event: &'a Event,
    decoded: &'a Result<Vec<Field<'a>>, DecodeError>,
) -> (impl Iterator<Item = (&'a str, ValueRef<'a>)> + Clone + 'a, Option<String>) {
    let (fields, undecodable, error) = match decoded {
        Ok(fields) => (fields.as_slice(), None, None),
        // An EventHeader payload carries its own layout: one that does not
        // follow it is kept whole, from its header on, for whoever reads it.
        Err(e @ DecodeError::EventHeader { .. }) => {
            let start = event.format.fields.first().map_or(0, |f| f.offset);
            (&[][..], Some(event.raw.get(start..).unwrap_or_default()), Some(e.to_string()))
        }
        Err(e) => (&[][..], None, Some(e.to_string())),
    };
    let raw = undecodable.map(|payload| (UNDECODABLE_FIELD, ValueRef::Bytes(payload)));
    (fields.iter().map(field_ref).chain(raw), error)
}

fn field_ref<'a>((name, value): &'a Field<'a>) -> (&'a str, ValueRef<'a>) {
    (name, value_ref(value))
}

/// The name `event` goes by, and its tracepoint where that differs: an
/// EventHeader event is `Provider:Event` (from its decoded `meta.provider`
/// and `meta.event`), as Microsoft's decoders name it, since many events
/// share its tracepoint; any other event, or an EventHeader event that
/// could not be decoded, is its tracepoint's name.
fn names<'a>(event: &'a Event, decoded: &Result<Vec<Field<'_>>, DecodeError>) -> (Cow<'a, str>, Option<&'a str>) {
    // The decoder puts `meta.*` last: looked for from the end.
    fn text<'f>(fields: &'f [Field<'_>], name: &str) -> Option<&'f str> {
        match fields.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v)? {
            FieldValue::Str(s) => Some(s.as_ref()),
            _ => None,
        }
    }
    let eventheader = match decoded {
        Ok(fields) if is_eventheader(&event.format) => {
            text(fields, EVENTHEADER_PROVIDER_FIELD).zip(text(fields, EVENTHEADER_EVENT_FIELD))
        }
        _ => None,
    };
    match eventheader {
        Some((provider, name)) => (Cow::Owned(usertrace::eventheader_event_name(provider, name)), Some(event.name())),
        None => (Cow::Borrowed(event.name()), None),
    }
}

/// `event` with its fields decoded (or the reason they could not be).
pub fn event_record(event: &Event) -> EventRecord {
    let decoded = event.fields();
    let (name, tracepoint) = names(event, &decoded);
    let (fields, error) = fields_of(event, &decoded);
    EventRecord {
        time_ns: event.time_ns,
        cpu: event.cpu,
        pid: event.pid,
        tid: event.tid,
        comm: event.comm.to_string(),
        process: event.process.to_string(),
        namespaces: event.namespaces.as_deref().map(namespaces),
        event: name.into_owned(),
        tracepoint: tracepoint.map(str::to_owned),
        fields: fields.map(|(name, value)| (name.to_owned(), Value::from(value))).collect(),
        error,
        stack: stack_frames(&event.stack),
    }
}

/// A stack's frames as the outputs' records hold them.
pub fn stack_frames(stack: &[crate::Frame]) -> Vec<StackFrame> {
    stack
        .iter()
        .map(|f| StackFrame {
            address: f.address,
            module: f.module.as_deref().map(str::to_owned),
            module_offset: f.module.as_ref().map(|_| f.module_offset),
            function: f.function.as_deref().map(str::to_owned),
            file: f.file.as_deref().map(str::to_owned),
            line: f.line,
        })
        .collect()
}

/// Appends `event`'s JSON line to `out`: the line [`event_record`] and
/// `jsonl::write_record` give, written from the event itself with no owned
/// copy of its names and values, which a line per event would pay for.
/// `kept` holds the namespaces object of the line before, to copy when
/// they are the same. Returns whether the payload could not be decoded (the
/// line then has an `error`, as [`EventRecord::error`] would).
pub fn write_event_line(event: &Event, kept: &mut NamespacesJsonCache, out: &mut Vec<u8>) -> bool {
    let decoded = event.fields();
    let (name, tracepoint) = names(event, &decoded);
    let (fields, error) = fields_of(event, &decoded);
    let namespaces = event.namespaces.as_deref().map(namespaces);
    let line = EventLine {
        time_ns: event.time_ns,
        cpu: event.cpu,
        pid: event.pid,
        tid: event.tid,
        comm: &event.comm,
        process: &event.process,
        namespaces: namespaces.as_ref().map(|ns| kept.get(ns)),
        event: &name,
        tracepoint,
        fields: FieldRefs(fields),
        error: error.as_deref(),
        stack: &stack_frames(&event.stack),
    };
    write_json_line(&line, out);
    error.is_some()
}

fn namespaces(ns: &crate::Namespaces) -> Namespaces {
    Namespaces { net: ns.net, uts: ns.uts, ipc: ns.ipc, pid: ns.pid, user: ns.user, mnt: ns.mnt, cgroup: ns.cgroup }
}

fn value_ref<'a>(value: &'a FieldValue<'a>) -> ValueRef<'a> {
    match value {
        FieldValue::Unsigned(v) => ValueRef::Unsigned(*v),
        FieldValue::Signed(v) => ValueRef::Signed(*v),
        FieldValue::Bool(v) => ValueRef::Bool(*v),
        FieldValue::F32(v) => ValueRef::F32(*v),
        FieldValue::F64(v) => ValueRef::F64(*v),
        FieldValue::Str(s) => ValueRef::Str(s),
        FieldValue::Bytes(b) => ValueRef::Bytes(b),
        FieldValue::Array(items) => ValueRef::Array(items.iter().map(value_ref).collect()),
        FieldValue::Struct(members) => ValueRef::Struct(members.iter().map(|(n, v)| (n.as_ref(), value_ref(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::EventFormat;
    use usertrace_output::jsonl::write_record;

    use super::*;

    /// `P_L4K1 E { u8 n = 42 }`, as LinuxTracepoints lays it out: the
    /// header (flags 7: 64-bit, little-endian, extensions; level 4), the
    /// metadata extension (event name, field name, encoding Value8), the data.
    fn eventheader_event(payload_tail: &[u8]) -> Event {
        eventheader_event_with(b"E\0n\0\x02", payload_tail)
    }

    /// `P_L4K1` with this metadata (event name, then each field's name and
    /// encoding) and this data after the header.
    fn eventheader_event_with(metadata: &[u8], payload_tail: &[u8]) -> Event {
        let format = EventFormat::parse(
            "user_events",
            "name: P_L4K1\nID: 3\n\tfield:u8 eventheader_flags;\toffset:8;\tsize:1;\tsigned:0;\n\
             \tfield:u8 version;\toffset:9;\tsize:1;\tsigned:0;\n\
             \tfield:u16 id;\toffset:10;\tsize:2;\tsigned:0;\n\
             \tfield:u16 tag;\toffset:12;\tsize:2;\tsigned:0;\n\
             \tfield:u8 opcode;\toffset:14;\tsize:1;\tsigned:0;\n\
             \tfield:u8 level;\toffset:15;\tsize:1;\tsigned:0;\n",
        )
        .unwrap();
        let mut raw = vec![0u8; 8];
        raw.extend_from_slice(&[7, 0, 0, 0, 0, 0, 0, 4]);
        raw.extend_from_slice(&(metadata.len() as u16).to_le_bytes());
        raw.extend_from_slice(&[1, 0]);
        raw.extend_from_slice(metadata);
        raw.extend_from_slice(payload_tail);
        Event {
            time_ns: 5,
            cpu: 0,
            pid: 10,
            tid: 11,
            comm: "w".into(),
            process: "p".into(),
            namespaces: None,
            format: Arc::new(format),
            raw: raw.into(),
            stack: Box::default(),
        }
    }

    #[test]
    fn an_eventheader_event_is_a_record_with_its_own_fields_and_meta() {
        let record = event_record(&eventheader_event(&[42]));
        assert_eq!(record.error, None);
        // Named as Microsoft's decoders name it, its tracepoint beside.
        assert_eq!((record.event.as_str(), record.tracepoint.as_deref()), ("P:E", Some("P_L4K1")));
        assert_eq!(
            record.fields,
            vec![
                ("n".to_owned(), Value::Unsigned(42)),
                ("meta.provider".to_owned(), Value::Str("P".into())),
                ("meta.event".to_owned(), Value::Str("E".into())),
                ("meta.level".to_owned(), Value::Unsigned(4)),
                ("meta.keyword".to_owned(), Value::Unsigned(1)),
                ("meta.flags".to_owned(), Value::Unsigned(7)),
            ]
        );
        let mut line = Vec::new();
        write_record(&Record::Event(record), &mut line);
        let line = String::from_utf8(line).unwrap();
        assert!(
            line.contains(r#""event":"P:E","tracepoint":"P_L4K1","fields":{"n":42,"meta.provider":"P","meta.event":"E","meta.level":4,"meta.keyword":1,"meta.flags":7}"#),
            "{line}"
        );
    }

    /// `P_L4K1 E { u8 n = 42 }` with `opcode` and an activity id extension
    /// (activity 0x01 repeated then 0x03 repeated: span id 0x0202020202020202).
    fn activity_event(opcode: u8, time_ns: u64) -> Event {
        let mut event = eventheader_event(&[42]);
        let mut raw = event.raw[..16].to_vec();
        raw[14] = opcode;
        raw.extend_from_slice(&[16, 0, 2, 0x80]);
        raw.extend_from_slice(&[1; 8]);
        raw.extend_from_slice(&[3; 8]);
        raw.extend_from_slice(&event.raw[16..]);
        event.raw = raw.into();
        Event { time_ns, ..event }
    }

    #[test]
    fn an_eventheader_activity_start_and_stop_are_a_span_in_the_timeline() {
        let records =
            [Record::Event(event_record(&activity_event(1, 5))), Record::Event(event_record(&activity_event(2, 9)))];
        let timeline = usertrace_output::timeline::Timeline::build(&records);
        assert_eq!(timeline.spans.len(), 1, "{timeline:?}");
        let span = &timeline.spans[0];
        assert_eq!(
            (span.name.as_str(), span.pid, span.start_ns, span.end_ns, span.id, span.unfinished),
            ("P:E", 10, 5, 9, Some(0x0202_0202_0202_0202), None)
        );
        assert!(timeline.instants.is_empty(), "{timeline:?}");
    }

    /// `P_L4K1 E { u8 a[] = [1, 2]; struct p { u8 x = 7; u8 y = 8 } }`: a
    /// variable-length array (encoding 0x40 | Value8) and a struct (0x80 |
    /// Struct, its format byte the member count).
    fn nested_event() -> Event {
        eventheader_event_with(b"E\0a\0\x42p\0\x81\x02x\0\x02y\0\x02", &[2, 0, 1, 2, 7, 8])
    }

    #[test]
    fn an_eventheader_array_and_struct_are_nested_values_in_the_record_and_its_line() {
        let record = event_record(&nested_event());
        assert_eq!(record.error, None);
        assert_eq!(
            record.fields[..2],
            [
                ("a".to_owned(), Value::Array(vec![Value::Unsigned(1), Value::Unsigned(2)])),
                ("p".to_owned(), Value::Struct(vec![("x".to_owned(), Value::Unsigned(7)), ("y".to_owned(), Value::Unsigned(8))])),
            ]
        );
        let mut line = Vec::new();
        write_record(&Record::Event(record), &mut line);
        let line = String::from_utf8(line).unwrap();
        assert!(line.contains(r#""event":"P:E","tracepoint":"P_L4K1","fields":{"a":[1,2],"p":{"x":7,"y":8},"meta.provider":"P""#), "{line}");
    }

    #[test]
    fn an_undecodable_eventheader_event_keeps_its_error_and_payload() {
        // The metadata says 5 bytes but only 3 are there, and no data.
        let mut event = eventheader_event(&[]);
        event.raw = event.raw[..8 + 8 + 4 + 3].into();
        let record = event_record(&event);
        // With no metadata read, it goes by its tracepoint's name.
        assert_eq!((record.event.as_str(), record.tracepoint.as_deref()), ("P_L4K1", None));
        assert_eq!(
            record.error.as_deref(),
            Some("undecodable EventHeader event at byte 0: a length or offset runs past the end of the payload")
        );
        assert_eq!(
            record.fields,
            vec![(UNDECODABLE_FIELD.to_owned(), Value::Bytes(vec![7, 0, 0, 0, 0, 0, 0, 4, 5, 0, 1, 0, b'E', 0, b'n']))]
        );
    }

    #[test]
    fn an_eventheader_line_straight_from_the_event_is_the_records_line() {
        let mut undecodable = eventheader_event(&[]);
        undecodable.raw = undecodable.raw[..8 + 8 + 4 + 3].into();
        for (event, broken) in [(eventheader_event(&[42]), false), (activity_event(1, 5), false), (nested_event(), false), (undecodable, true)] {
            let mut want = Vec::new();
            write_record(&Record::Event(event_record(&event)), &mut want);
            let mut got = Vec::new();
            assert_eq!(write_event_line(&event, &mut NamespacesJsonCache::default(), &mut got), broken);
            assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
        }
    }

    #[test]
    fn an_events_stack_is_in_its_record_and_its_line_straight_from_the_event() {
        let mut event = eventheader_event(&[42]);
        let frame = |address, module: Option<&str>, function: Option<&str>, line| crate::Frame {
            address,
            module: module.map(Into::into),
            module_offset: if module.is_some() { address - 0x1000 } else { 0 },
            function: function.map(Into::into),
            file: function.map(|_| "app.c".into()),
            line,
        };
        event.stack = vec![frame(0x1010, Some("/bin/app"), Some("inner"), Some(3)), frame(0x2000, None, None, None)].into();
        let record = event_record(&event);
        assert_eq!(
            record.stack,
            vec![
                StackFrame {
                    address: 0x1010,
                    module: Some("/bin/app".into()),
                    module_offset: Some(0x10),
                    function: Some("inner".into()),
                    file: Some("app.c".into()),
                    line: Some(3)
                },
                StackFrame { address: 0x2000, ..StackFrame::default() },
            ]
        );
        let mut want = Vec::new();
        write_record(&Record::Event(record), &mut want);
        let mut got = Vec::new();
        write_event_line(&event, &mut NamespacesJsonCache::default(), &mut got);
        assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
    }
}

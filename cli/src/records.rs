//! What a live session yields, as the neutral records every output of
//! `usertrace_output` takes.

use usertrace_consumer::{DecodeError, Event, FieldValue, Output};
use usertrace_output::{EventRecord, ExitRecord, LostRecord, Namespaces, ProcessRecord, Record, Value};

/// The record for `output`; `None` for what is no part of a recording
/// (a tracepoint being attached).
pub fn to_record(output: Output) -> Option<Record> {
    match output {
        Output::Event(event) => Some(Record::Event(event_record(&event))),
        Output::Lost { cpu, time_ns, count, sideband } => Some(Record::Lost(LostRecord { time_ns, cpu, count, sideband })),
        Output::Process { time_ns, pid, info } => {
            Some(Record::Process(ProcessRecord { time_ns, pid, executable: info.executable, command_line: info.command_line, container_id: info.container_id }))
        }
        Output::Exit { time_ns, pid, tid } => Some(Record::Exit(ExitRecord { time_ns, pid, tid })),
        Output::Attached { .. } => None,
    }
}

/// The one field of an undecodable EventHeader event: its payload's bytes.
pub const UNDECODABLE_FIELD: &str = "raw";

/// `event` with its fields decoded (or the reason they could not be).
pub fn event_record(event: &Event) -> EventRecord {
    let (fields, error) = match event.fields() {
        Ok(fields) => (fields.into_iter().map(|(name, value)| (name.into_owned(), value_of(value))).collect(), None),
        // An EventHeader payload carries its own layout: one that does not
        // follow it is kept whole, from its header on, for whoever reads it.
        Err(e @ DecodeError::EventHeader { .. }) => {
            let start = event.format.fields.first().map_or(0, |f| f.offset);
            let payload = event.raw.get(start..).unwrap_or_default().to_vec();
            (vec![(UNDECODABLE_FIELD.to_owned(), Value::Bytes(payload))], Some(e.to_string()))
        }
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    EventRecord {
        time_ns: event.time_ns,
        cpu: event.cpu,
        pid: event.pid,
        tid: event.tid,
        comm: event.comm.to_string(),
        process: event.process.to_string(),
        namespaces: event.namespaces.as_deref().map(|ns| Namespaces {
            net: ns.net,
            uts: ns.uts,
            ipc: ns.ipc,
            pid: ns.pid,
            user: ns.user,
            mnt: ns.mnt,
            cgroup: ns.cgroup,
        }),
        event: event.name().to_owned(),
        fields,
        error,
    }
}

/// Appends `event`'s JSON line to `out`: byte for byte what
/// [`event_record`] and `usertrace_output::jsonl::write_record` write (the
/// tests hold them to it), but written by hand from the event's own names
/// and payload: no owned copy of either, and none of serde's generic
/// machinery, which an event line per record pays for. Returns whether
/// the payload could not be decoded (the line then has an `error`, as
/// [`EventRecord::error`] would).
pub fn write_event_line(event: &Event, out: &mut Vec<u8>) -> bool {
    let e = event;
    out.extend_from_slice(b"{\"type\":\"event\",\"time_ns\":");
    push_u64(out, e.time_ns);
    out.extend_from_slice(b",\"cpu\":");
    push_u64(out, e.cpu.into());
    out.extend_from_slice(b",\"pid\":");
    push_u64(out, e.pid.into());
    out.extend_from_slice(b",\"tid\":");
    push_u64(out, e.tid.into());
    out.extend_from_slice(b",\"comm\":");
    push_str(out, &e.comm);
    out.extend_from_slice(b",\"process\":");
    push_str(out, &e.process);
    if let Some(n) = e.namespaces.as_deref() {
        let kinds = [("net", n.net), ("uts", n.uts), ("ipc", n.ipc), ("pid", n.pid), ("user", n.user), ("mnt", n.mnt), ("cgroup", n.cgroup)];
        out.extend_from_slice(b",\"namespaces\":{");
        for (i, (kind, inode)) in kinds.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_str(out, kind);
            out.push(b':');
            push_u64(out, inode);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b",\"event\":");
    push_str(out, e.name());
    out.extend_from_slice(b",\"fields\":{");
    let undecodable = match e.fields() {
        Ok(fields) => {
            for (i, (name, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_str(out, name);
                out.push(b':');
                push_value(out, value);
            }
            out.push(b'}');
            false
        }
        // As event_record: an EventHeader payload that does not follow
        // its own layout is kept whole, from its header on.
        Err(error @ DecodeError::EventHeader { .. }) => {
            let start = e.format.fields.first().map_or(0, |f| f.offset);
            push_str(out, UNDECODABLE_FIELD);
            out.push(b':');
            push_value(out, &FieldValue::Bytes(e.raw.get(start..).unwrap_or_default()));
            out.extend_from_slice(b"},\"error\":");
            push_str(out, &error.to_string());
            true
        }
        Err(error) => {
            out.extend_from_slice(b"},\"error\":");
            push_str(out, &error.to_string());
            true
        }
    };
    out.extend_from_slice(b"}\n");
    undecodable
}

/// A field value as `jsonl::write_record` writes its [`Value`]: numbers
/// as they are (floats as Rust's Display writes them), non-finite floats
/// as the strings `NaN`, `inf`, `-inf`, bytes as a string of lowercase hex.
fn push_value(out: &mut Vec<u8>, value: &FieldValue<'_>) {
    use std::io::Write;
    // Writes into a Vec cannot fail.
    match value {
        FieldValue::Unsigned(v) => push_u64(out, *v),
        FieldValue::Signed(v) => {
            if *v < 0 {
                out.push(b'-');
            }
            push_u64(out, v.unsigned_abs());
        }
        FieldValue::Bool(v) => out.extend_from_slice(if *v { b"true" } else { b"false" }),
        FieldValue::F32(v) if v.is_finite() => drop(write!(out, "{v}")),
        FieldValue::F64(v) if v.is_finite() => drop(write!(out, "{v}")),
        FieldValue::F32(v) => drop(write!(out, "\"{v}\"")),
        FieldValue::F64(v) => drop(write!(out, "\"{v}\"")),
        FieldValue::Str(s) => push_str(out, s),
        FieldValue::Bytes(b) => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push(b'"');
            for &x in *b {
                out.extend_from_slice(&[HEX[usize::from(x >> 4)], HEX[usize::from(x & 15)]]);
            }
            out.push(b'"');
        }
    }
}

/// `v` in decimal.
fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// `s` as a JSON string, escaped as every usertrace JSON line escapes
/// (`usertrace_output::jsonl::LineFormatter`): `"` as `\"`, `\` as `\\`,
/// newline, CR and tab as `\n`, `\r`, `\t`, other control characters
/// below U+0020 as `\u00XX` in lowercase hex; nothing else.
fn push_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut plain = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => &[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]],
            _ => continue,
        };
        out.extend_from_slice(&bytes[plain..i]);
        out.extend_from_slice(escape);
        plain = i + 1;
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

fn value_of(value: FieldValue<'_>) -> Value {
    match value {
        FieldValue::Unsigned(v) => Value::Unsigned(v),
        FieldValue::Signed(v) => Value::Signed(v),
        FieldValue::Bool(v) => Value::Bool(v),
        FieldValue::F32(v) => Value::F32(v),
        FieldValue::F64(v) => Value::F64(v),
        FieldValue::Str(s) => Value::Str(s.into_owned()),
        FieldValue::Bytes(b) => Value::Bytes(b.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use usertrace_consumer::EventFormat;
    use usertrace_output::jsonl::write_record;

    use super::*;

    /// `P_L4K1 E { u8 n = 42 }`, as LinuxTracepoints lays it out: the
    /// header (flags 7: 64-bit, little-endian, extensions; level 4), the
    /// metadata extension (event name, field name, encoding Value8), the data.
    fn eventheader_event(payload_tail: &[u8]) -> Event {
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
        raw.extend_from_slice(&[5, 0, 1, 0]);
        raw.extend_from_slice(b"E\0n\0\x02");
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
        }
    }

    #[test]
    fn an_eventheader_event_is_a_record_with_its_own_fields_and_meta() {
        let record = event_record(&eventheader_event(&[42]));
        assert_eq!(record.error, None);
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
            line.contains(r#""event":"P_L4K1","fields":{"n":42,"meta.provider":"P","meta.event":"E","meta.level":4,"meta.keyword":1,"meta.flags":7}"#),
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

    #[test]
    fn an_undecodable_eventheader_event_keeps_its_error_and_payload() {
        // The metadata says 5 bytes but only 3 are there, and no data.
        let mut event = eventheader_event(&[]);
        event.raw = event.raw[..8 + 8 + 4 + 3].into();
        let record = event_record(&event);
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
        for (event, broken) in [(eventheader_event(&[42]), false), (activity_event(1, 5), false), (undecodable, true)] {
            let mut want = Vec::new();
            write_record(&Record::Event(event_record(&event)), &mut want);
            let mut got = Vec::new();
            assert_eq!(write_event_line(&event, &mut got), broken);
            assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
        }
    }
}

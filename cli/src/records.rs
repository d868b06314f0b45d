//! What a live session yields, as the neutral records every output of
//! `usertrace_output` takes.

use usertrace_consumer::{Event, FieldValue, Output};
use usertrace_output::{EventRecord, ExitRecord, LostRecord, Namespaces, ProcessRecord, Record, Value};

/// The record for `output`; `None` for what is no part of a recording
/// (a tracepoint being attached).
pub fn to_record(output: Output) -> Option<Record> {
    match output {
        Output::Event(event) => Some(Record::Event(event_record(&event))),
        Output::Lost { cpu, time_ns, count, sideband } => Some(Record::Lost(LostRecord { time_ns, cpu, count, sideband })),
        Output::Process { time_ns, pid, info } => {
            Some(Record::Process(ProcessRecord { time_ns, pid, executable: info.executable, command_line: info.command_line }))
        }
        Output::Exit { time_ns, pid, tid } => Some(Record::Exit(ExitRecord { time_ns, pid, tid })),
        Output::Attached { .. } => None,
    }
}

/// `event` with its fields decoded (or the reason they could not be).
pub fn event_record(event: &Event) -> EventRecord {
    let (fields, error) = match event.fields() {
        Ok(fields) => (fields.into_iter().map(|(name, value)| (name.into_owned(), value_of(value))).collect(), None),
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

//! Building synthetic records for the unit tests.

use crate::record::{EventRecord, ExitRecord, LostRecord, ProcessRecord, Record, Value};

/// An event `name` at `t` from `pid`/`tid` with `fields`.
pub fn event(t: u64, pid: u32, tid: u32, name: &str, fields: &[(&str, Value)]) -> Record {
    Record::Event(EventRecord {
        time_ns: t,
        cpu: 0,
        pid,
        tid,
        comm: format!("thread{tid}"),
        process: format!("proc{pid}"),
        namespaces: None,
        event: name.into(),
        tracepoint: None,
        fields: fields.iter().map(|(n, v)| ((*n).to_owned(), v.clone())).collect(),
        error: None,
        stack: Vec::new(),
    })
}

/// `record`, an event, with this user stack (innermost first).
pub fn with_stack(mut record: Record, stack: Vec<crate::record::StackFrame>) -> Record {
    if let Record::Event(e) = &mut record {
        e.stack = stack;
    }
    record
}

/// A frame named `function` in /usr/bin/app (loaded at 0x40_0000) at
/// `address`, at `line` of app.c.
pub fn named_frame(address: u64, function: &str, line: u32) -> crate::record::StackFrame {
    crate::record::StackFrame {
        address,
        module: Some("/usr/bin/app".into()),
        module_offset: Some(address - 0x40_0000),
        function: Some(function.into()),
        file: Some("app.c".into()),
        line: Some(line),
    }
}

/// A stack of named frames, innermost first: `main` last, one unnamed
/// frame (no file known) in between.
pub fn stack() -> Vec<crate::record::StackFrame> {
    use crate::record::StackFrame;
    vec![named_frame(0x40_1000, "inner", 3), StackFrame { address: 0x7f00_0000_1234, ..StackFrame::default() }, named_frame(0x40_2000, "main", 9)]
}

pub fn begin(t: u64, pid: u32, tid: u32, name: &str, id: u64) -> Record {
    event(t, pid, tid, name, &[("span_begin", Value::Unsigned(id))])
}

/// A span begin that carries its trace context (the convention's fields
/// after the id), then `fields`.
/// `context` is `(trace id, parent span id)`.
pub fn traced_begin(t: u64, pid: u32, tid: u32, name: &str, id: u64, context: (u128, u64), fields: &[(&str, Value)]) -> Record {
    let (trace_id, parent) = context;
    let mut all = vec![
        ("span_begin", Value::Unsigned(id)),
        ("trace_id_hi", Value::Unsigned((trace_id >> 64) as u64)),
        ("trace_id_lo", Value::Unsigned(trace_id as u64)),
        ("parent_span_id", Value::Unsigned(parent)),
    ];
    all.extend(fields.iter().cloned());
    event(t, pid, tid, name, &all)
}

pub fn end(t: u64, pid: u32, tid: u32, name: &str, id: u64) -> Record {
    event(t, pid, tid, name, &[("span_end", Value::Unsigned(id))])
}

pub fn exit(t: u64, pid: u32, tid: u32) -> Record {
    Record::Exit(ExitRecord { time_ns: t, pid, tid })
}

pub fn process(t: u64, pid: u32, executable: &str, args: &[&str]) -> Record {
    Record::Process(ProcessRecord {
        time_ns: t,
        pid,
        executable: Some(executable.into()),
        command_line: Some(args.iter().map(|a| (*a).to_owned()).collect()),
        container_id: None,
        resource: Default::default(),
        pod_uid: None,
        pid_in_container: None,
    })
}

/// prev_state values as kernel 6.12 reports them.
pub const R: i64 = 0;
pub const R_PREEMPTED: i64 = 0x100;
pub const S: i64 = 0x1;
pub const D: i64 = 0x2;

/// `sched_switch` at `t`, in the switched-out task's context (pid = tid).
pub fn switch(t: u64, prev: u32, prev_state: i64, next: u32) -> Record {
    event(
        t,
        prev,
        prev,
        "sched_switch",
        &[
            ("prev_comm", Value::Str(format!("thread{prev}"))),
            ("prev_pid", Value::Signed(i64::from(prev))),
            ("prev_prio", Value::Signed(120)),
            ("prev_state", Value::Signed(prev_state)),
            ("next_comm", Value::Str(format!("thread{next}"))),
            ("next_pid", Value::Signed(i64::from(next))),
            ("next_prio", Value::Signed(120)),
        ],
    )
}

/// `sched_waking` of `wakee` at `t`, in the waker's context.
pub fn waking(t: u64, waker_pid: u32, waker_tid: u32, wakee: u32) -> Record {
    event(
        t,
        waker_pid,
        waker_tid,
        "sched_waking",
        &[
            ("comm", Value::Str(format!("thread{wakee}"))),
            ("pid", Value::Signed(i64::from(wakee))),
            ("prio", Value::Signed(120)),
            ("target_cpu", Value::Signed(0)),
        ],
    )
}

pub fn migrate(t: u64, tid: u32) -> Record {
    event(
        t,
        tid,
        tid,
        "sched_migrate_task",
        &[
            ("comm", Value::Str(format!("thread{tid}"))),
            ("pid", Value::Signed(i64::from(tid))),
            ("prio", Value::Signed(120)),
            ("orig_cpu", Value::Signed(0)),
            ("dest_cpu", Value::Signed(1)),
        ],
    )
}

/// `record` as emitted on `cpu`.
pub fn on_cpu(cpu: u32, mut record: Record) -> Record {
    if let Record::Event(e) = &mut record {
        e.cpu = cpu;
    }
    record
}

/// Thread 11 of process 10 sleeps in `sleep_span` [100, 1000): switched
/// out asleep on cpu 0 at 200, woken by thread 12 from cpu 1 at 900, run
/// at 950, preempted by thread 20 at 960, run again at 980 until past the
/// span's end, and migrated to cpu 1 at 1000.
pub fn sleeping() -> Vec<Record> {
    vec![
        process(1, 10, "/usr/bin/server", &["server"]),
        begin(100, 10, 11, "sleep_span", 1),
        switch(200, 11, S, 0),
        on_cpu(1, waking(900, 10, 12, 11)),
        switch(950, 0, R, 11),
        switch(960, 11, R_PREEMPTED, 20),
        switch(980, 20, R, 11),
        end(1000, 10, 11, "sleep_span", 1),
        on_cpu(1, migrate(1000, 11)),
    ]
}

pub fn lost(t: u64, cpu: u32, count: u64) -> Record {
    Record::Lost(LostRecord { time_ns: t, cpu, count, sideband: false })
}

/// A recording with a bit of everything: two processes, three threads,
/// nested thread spans, a span ended on another thread, a completed span,
/// instants of every value type, a loss, exits.
pub fn mixed() -> Vec<Record> {
    vec![
        process(1, 10, "/usr/bin/server", &["server", "--port", "80"]),
        begin(10, 10, 10, "request", 1),
        begin(20, 10, 10, "parse", 2),
        event(25, 10, 10, "note", &[("u", Value::Unsigned(u64::MAX)), ("i", Value::Signed(-5)), ("b", Value::Bool(true))]),
        end(30, 10, 10, "parse", 2),
        begin(40, 10, 10, "handoff", 3),
        event(45, 10, 11, "gc", &[("span_start_ns", Value::Unsigned(41)), ("span_duration_ns", Value::Unsigned(3)), ("heap", Value::F64(1.5))]),
        end(50, 10, 11, "handoff", 3),
        end(60, 10, 10, "request", 1),
        lost(61, 1, 12),
        event(62, 20, 21, "tick", &[("s", Value::Str("héllo \"x\"\n".into())), ("f", Value::F32(0.5))]),
        begin(63, 20, 21, "work", 7),
        exit(70, 20, 20),
    ]
}

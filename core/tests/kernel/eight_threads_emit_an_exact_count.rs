use std::collections::BTreeSet;
use std::sync::Barrier;

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

use crate::support::{clear_trace, set_ftrace, trace_lines, unique_name};

const THREADS: u32 = 8;
const PER_THREAD: u32 = 500;

#[test]
fn eight_threads_register_and_emit_concurrently_and_every_event_arrives_once() {
    let name = unique_name("threads");
    let fields = vec![Field::new("thread", FieldType::U32), Field::new("seq", FieldType::U32)];
    let keeper = DynamicTracepoint::new(&name, fields.clone(), RegisterOptions::default()).unwrap();
    keeper.register().unwrap();
    set_ftrace(&name, true);
    clear_trace();

    let start = Barrier::new(THREADS as usize);
    std::thread::scope(|s| {
        for thread in 0..THREADS {
            let (fields, name, start) = (fields.clone(), &name, &start);
            s.spawn(move || {
                start.wait();
                let tp = DynamicTracepoint::new(name.as_str(), fields, RegisterOptions::default()).unwrap();
                tp.register().unwrap();
                assert!(tp.enabled());
                for seq in 0..PER_THREAD {
                    tp.emit(&[Value::U32(thread), Value::U32(seq)]).unwrap();
                }
            });
        }
    });
    set_ftrace(&name, false);

    let lines = trace_lines(&name, &["thread", "seq"]);
    let seen: BTreeSet<(u32, u32)> =
        lines.iter().map(|l| (l.fields["thread"].parse().unwrap(), l.fields["seq"].parse().unwrap())).collect();
    assert_eq!(lines.len(), (THREADS * PER_THREAD) as usize, "exact count");
    assert_eq!(seen.len(), lines.len(), "no duplicates");
}

//! A thread's exit closes its ring: CLOSED is set for a recorder to drain
//! what is left, and with no recorder holding the registry, the file goes.

mod shm_support;

use std::sync::Arc;

use shm_support::{in_child, payload_u32_str, ring_paths, set_recorder, set_word, RingReader};
use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

#[test]
fn an_exited_thread_s_ring_is_closed_and_removed_when_no_recorder_holds_it() {
    if !in_child("an_exited_thread_s_ring_is_closed_and_removed_when_no_recorder_holds_it", &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    let pid = std::process::id();
    let fields = vec![Field::new("a", FieldType::U32), Field::new("b", FieldType::Str)];
    let tp = Arc::new(DynamicTracepoint::new("shmtest_exit", fields, RegisterOptions::default()).unwrap());
    tp.register().unwrap();
    set_word(tp.tracepoint().enable_word(), 1);

    // No recorder: the file goes with the thread.
    let emitter = Arc::clone(&tp);
    std::thread::spawn(move || emitter.emit(&[Value::U32(1), Value::Str("gone")]).unwrap()).join().unwrap();
    assert!(ring_paths(pid).is_empty(), "{:?}", ring_paths(pid));

    // A recorder holds the registry: the ring stays, closed, with its record.
    set_recorder(pid, pid);
    let emitter = Arc::clone(&tp);
    let (opened, thread_done) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
    let thread = std::thread::spawn(move || {
        emitter.emit(&[Value::U32(2), Value::Str("kept")]).unwrap();
        opened.0.send(()).unwrap();
        thread_done.1.recv().unwrap();
    });
    opened.1.recv().unwrap();
    let rings = ring_paths(pid);
    assert_eq!(rings.len(), 1);
    let ring = RingReader::open(&rings[0]);
    assert!(!ring.closed(), "open while the thread lives");
    thread_done.0.send(()).unwrap();
    thread.join().unwrap();
    assert!(ring.closed());
    assert_eq!(ring.drain()[0].payload, payload_u32_str(2, "kept"));
    assert!(rings[0].exists(), "left for the recorder to drain and remove");
    set_recorder(pid, 0);
}

//! A fork child never writes its parent's files: before any of its code
//! runs it has a registry of its own (its pid, its start time, the same
//! live slots), and its emits go into a ring of its own.

mod shm_support;

use shm_support::{in_child, payload_u32_str, registry_path, ring_paths, set_word, RegistryCopy, RingReader};
use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

#[test]
fn a_fork_child_has_its_own_registry_with_the_same_slots_and_writes_its_own_ring() {
    if !in_child("a_fork_child_has_its_own_registry_with_the_same_slots_and_writes_its_own_ring", &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    let parent = std::process::id();
    let fields = vec![Field::new("a", FieldType::U32), Field::new("b", FieldType::Str)];
    let tp = DynamicTracepoint::new("shmtest_fork", fields, RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    set_word(tp.tracepoint().enable_word(), 1);
    tp.emit(&[Value::U32(1), Value::Str("parent")]).unwrap();
    let before = RegistryCopy::read(parent);
    let parent_ring = RingReader::open(&ring_paths(parent)[0]);
    assert_eq!(parent_ring.drain().len(), 1);

    // SAFETY: the child emits (which the atfork handler has prepared it
    // for) and leaves with _exit, running nothing of the parent's.
    let child = unsafe { libc::fork() };
    assert!(child >= 0);
    if child == 0 {
        let ok = tp.emit(&[Value::U32(2), Value::Str("child")]).is_ok();
        // SAFETY: _exit ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked; `status` is writable.
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child status {status}");
    let child = child as u32;

    let copy = RegistryCopy::read(child);
    assert_eq!(copy.header.pid, child);
    assert_eq!(copy.header.recorder, 0);
    assert_eq!(copy.live(), before.live(), "the same slots, at the same indexes");
    // Its own start time: no earlier than the parent's.
    assert!(copy.header.start_time >= before.header.start_time);

    let rings = ring_paths(child);
    assert_eq!(rings.len(), 1, "the child's own ring: {rings:?}");
    let ring = RingReader::open(&rings[0]);
    assert_eq!(ring.header.pid, child);
    let records = ring.drain();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].payload, payload_u32_str(2, "child"));
    assert_eq!(records[0].header.slot as usize, before.live()[0].0);

    // The parent's files are as they were.
    assert!(parent_ring.drain().is_empty(), "the child wrote nothing into the parent's ring");
    let after = RegistryCopy::read(parent);
    assert_eq!(after.header, before.header);
    assert_eq!(after.live(), before.live());

    // The child left with _exit, so its files are ours to remove.
    std::fs::remove_file(registry_path(child)).unwrap();
    std::fs::remove_file(&rings[0]).unwrap();

    // And the parent goes on writing its own ring.
    tp.emit(&[Value::U32(3), Value::Str("parent again")]).unwrap();
    assert_eq!(parent_ring.drain()[0].payload, payload_u32_str(3, "parent again"));
}

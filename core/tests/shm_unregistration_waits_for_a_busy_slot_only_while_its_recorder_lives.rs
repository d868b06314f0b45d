//! A recorder holds a slot BUSY while it writes the enable word. An
//! unregistration waits for it; past UNREGISTER_WAIT_MS it fails (and a
//! DynamicTracepoint leaks its word rather than free it); once that
//! recorder no longer exists, the slot is taken back at once.

mod shm_support;

use std::time::{Duration, Instant};

use shm_support::{in_child, set_recorder, set_slot_state, RegistryCopy};
use usertrace::shm_layout::{slot, UNREGISTER_WAIT_MS};
use usertrace::{DynamicTracepoint, Error, ErrorKind, Field, FieldType, RegisterOptions};

#[test]
fn a_busy_slot_of_a_live_recorder_times_out_and_of_a_dead_one_is_taken_back() {
    if !in_child("a_busy_slot_of_a_live_recorder_times_out_and_of_a_dead_one_is_taken_back", &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    let pid = std::process::id();
    let tp = DynamicTracepoint::new("shmtest_busy", vec![Field::new("x", FieldType::U8)], RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    let index = RegistryCopy::read(pid).live()[0].0;

    // A live "recorder" (a child that sleeps) holds the slot.
    let mut recorder = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    set_recorder(pid, recorder.id());
    set_slot_state(pid, index, slot::STATE_BUSY);
    let started = Instant::now();
    let err = tp.unregister().unwrap_err();
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(UNREGISTER_WAIT_MS), "{waited:?}");
    assert!(waited < Duration::from_millis(UNREGISTER_WAIT_MS * 3), "{waited:?}");
    assert_eq!(err.kind(), ErrorKind::EventBusy);
    match &err {
        Error::UnregistrationTimedOut { event, recorder: who, .. } => {
            assert_eq!(event, "shmtest_busy");
            assert_eq!(*who, recorder.id());
        }
        other => panic!("{other:?}"),
    }
    assert!(tp.is_registered(), "the word stays registered");
    assert_eq!(RegistryCopy::read(pid).state(index), slot::STATE_BUSY);

    // Dropping the tracepoint now fails to unregister too, and leaks the
    // word: the slot still points at live memory.
    let address = tp.tracepoint().enable_word() as u64;
    drop(tp);
    let copy = RegistryCopy::read(pid);
    assert_eq!(copy.state(index), slot::STATE_BUSY);
    let slot_address = u64::from_ne_bytes(copy.slot_bytes(index)[8..16].try_into().unwrap());
    assert_eq!(slot_address, address);

    // The recorder dies: nobody can be writing, so the slot comes back.
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    let other = DynamicTracepoint::new("shmtest_busy2", vec![], RegisterOptions::default()).unwrap();
    other.register().unwrap();
    let other_index = RegistryCopy::read(pid).live().iter().find(|(_, s)| s.descriptor == "shmtest_busy2").unwrap().0;
    set_slot_state(pid, other_index, slot::STATE_BUSY);
    let started = Instant::now();
    other.unregister().unwrap();
    assert!(started.elapsed() < Duration::from_millis(UNREGISTER_WAIT_MS / 2));
    assert_eq!(RegistryCopy::read(pid).state(other_index), slot::STATE_FREE);
}

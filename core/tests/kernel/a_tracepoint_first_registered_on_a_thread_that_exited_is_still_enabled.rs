//! The kernel keeps a registration's enabler in the registering thread's
//! `user_event_mm` and frees it when the last thread sharing it exits
//! (`user_events_exit`): a tracepoint first emitted on a short-lived thread
//! must still be switched on by a recorder after that thread is gone.

use usertrace::{Tracepoint, Value};

use crate::support::{set_ftrace, unique_name};

#[test]
fn a_tracepoint_first_registered_on_a_thread_that_exited_is_still_enabled_by_a_recorder() {
    let name: &'static str = Box::leak(unique_name("exited").into_boxed_str());
    // A static tracepoint, as a program declares one: the first emit registers it.
    let tp: &'static Tracepoint = Box::leak(Box::new(Tracepoint::new(name, &[])));
    // A worker that emits once (registering it) and exits, as a pool's
    // thread may.
    std::thread::spawn(move || tp.emit(&[] as &[Value<'_>]).unwrap()).join().unwrap();
    assert!(tp.is_registered());
    assert!(!tp.enabled());

    set_ftrace(name, true);
    let on = tp.enabled();
    set_ftrace(name, false);
    assert!(on, "a recorder attached, and the kernel did not set the bit of a tracepoint whose registering thread had exited");
    // Still registered: it turns off as the recorder goes.
    assert!(!tp.enabled());
    // So that this process's data descriptor can close (other tests need it).
    tp.unregister().unwrap();
}

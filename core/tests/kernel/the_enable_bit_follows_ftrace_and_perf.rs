use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions};

use crate::support::{set_ftrace, unique_name, PerfTracepoint};

fn registered(prefix: &str) -> (String, DynamicTracepoint) {
    let name = unique_name(prefix);
    let tp = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U32)], RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    (name, tp)
}

#[test]
fn the_bit_is_set_by_ftrace_enable_and_cleared_by_disable() {
    let (name, tp) = registered("bit_ftrace");
    assert!(!tp.enabled(), "nobody listens yet");
    set_ftrace(&name, true);
    assert!(tp.enabled());
    set_ftrace(&name, false);
    assert!(!tp.enabled());
}

#[test]
fn the_bit_is_set_by_opening_a_perf_event_even_a_disabled_one() {
    let (name, tp) = registered("bit_perf");
    let perf = PerfTracepoint::open(&name, true);
    assert!(tp.enabled(), "the kernel sets the bit at perf_event_open, enabled or not");
    drop(perf);
    assert!(!tp.enabled());

    let perf = PerfTracepoint::open(&name, false);
    assert!(tp.enabled());
    drop(perf);
    assert!(!tp.enabled());
}

#[test]
fn a_registration_sees_a_tracer_that_attached_before_it() {
    let (name, first) = registered("bit_late");
    set_ftrace(&name, true);
    let second = DynamicTracepoint::new(&name, first.fields().to_vec(), RegisterOptions::default()).unwrap();
    second.register().unwrap();
    assert!(second.enabled(), "the kernel writes the current state at registration");
    set_ftrace(&name, false);
    assert!(!first.enabled() && !second.enabled());
}

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use usertrace::{Definition, DynamicTracepoint, ExternalTracepoint, Field, FieldType, RegisterOptions, Value};

use crate::support::{clear_trace, set_ftrace, trace_lines, unique_name};

/// The shape of a C `usertrace_event`: the enable word, then a neighbour in
/// the same 8 bytes that the kernel's `set_bit` must leave alone.
#[repr(C, align(8))]
struct CStyleEvent {
    enabled: AtomicU32,
    neighbour: AtomicU32,
}

#[test]
fn an_external_word_is_written_in_place_and_left_alone_once_released() {
    let name = unique_name("external");
    let fields = vec![Field::new("n", FieldType::U32)];
    // `keeper` keeps the event alive after the external one unregisters.
    let keeper = DynamicTracepoint::new(&name, fields.clone(), RegisterOptions::default()).unwrap();
    keeper.register().unwrap();
    // Outlives `tp`: the test reads it after the tracepoint is gone.
    let event = Box::new(CStyleEvent { enabled: AtomicU32::new(0), neighbour: AtomicU32::new(0xA5A5_A5A4) });

    let definition = Definition::new(&name, fields).unwrap();
    // SAFETY: `event` is boxed (fixed address), outlives `tp`, and is only
    // accessed atomically; `tp` is dropped (unregistered) before it.
    let tp = unsafe { ExternalTracepoint::new(NonNull::from(&event.enabled), definition, RegisterOptions::default()) };
    tp.register().unwrap();
    assert!(!tp.enabled());

    set_ftrace(&name, true);
    clear_trace();
    assert_eq!(event.enabled.load(Ordering::Relaxed), 1, "the kernel sets bit 0 of our word, in place");
    assert!(tp.enabled());
    tp.emit(&[Value::U32(77)]).unwrap();
    let lines = trace_lines(&name, &["n"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].fields["n"], "77");

    set_ftrace(&name, false);
    assert_eq!(event.enabled.load(Ordering::Relaxed), 0);
    set_ftrace(&name, true);
    drop(tp);
    assert_eq!(event.enabled.load(Ordering::Relaxed), 0, "unregistration on drop clears the bit");

    // Toggling the event now updates the keeper only.
    set_ftrace(&name, false);
    set_ftrace(&name, true);
    assert!(keeper.enabled());
    assert_eq!(event.enabled.load(Ordering::Relaxed), 0, "the kernel wrote a released word");
    assert_eq!(event.neighbour.load(Ordering::Relaxed), 0xA5A5_A5A4, "the kernel touched the word's neighbour");
    set_ftrace(&name, false);
}

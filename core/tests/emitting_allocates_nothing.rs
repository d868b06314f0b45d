//! An enabled emit is one `writev` and no heap allocation: a counting
//! allocator watches this thread while events of every kind are written.
//! Needs user_events (runs in the guest kernel).

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

mod counting_allocator;

mod events {
    usertrace::tracepoints! {
        provider ut_alloc;
        pub fn request(id: u64, path: &str, latency: f64, ok: bool);
    }
}

#[test]
fn enabled_emits_allocate_nothing() {
    let status = usertrace::status();
    assert!(status.is_available(), "this test needs user_events: {status}");
    let tracefs = status.tracefs.unwrap();

    let dynamic = DynamicTracepoint::new(
        "ut_alloc_dynamic",
        vec![Field::new("n", FieldType::U32), Field::new("s", FieldType::Str), Field::new("b", FieldType::Bytes)],
        RegisterOptions::default(),
    )
    .unwrap();
    dynamic.register().unwrap();
    events::PROVIDER.register().unwrap();
    for event in ["ut_alloc_dynamic", events::request::NAME] {
        std::fs::write(tracefs.join("events/user_events").join(event).join("enable"), "1").unwrap();
    }
    assert!(dynamic.enabled() && events::request::enabled());

    let payload = [7u8; 300];
    let allocated = counting_allocator::allocations_in(|| {
        for i in 0..1000u32 {
            dynamic.emit(&[Value::U32(i), Value::Str("a string of some length ✓"), Value::Bytes(&payload)]).unwrap();
            usertrace::emit!(events::request(u64::from(i), "/index.html", 1.25, true)).unwrap();
        }
    });
    assert_eq!(allocated, 0, "emits allocated");

    for event in ["ut_alloc_dynamic", events::request::NAME] {
        std::fs::write(tracefs.join("events/user_events").join(event).join("enable"), "0").unwrap();
    }
}

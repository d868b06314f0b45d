//! An enabled emit through shared memory allocates nothing: a counting
//! allocator watches this thread while events of several kinds go into its
//! ring. The shared-memory twin of emitting_allocates_nothing.rs, which
//! needs user_events; this runs on any Linux host.

mod shm_support;

use shm_support::{in_child, ring_paths, set_word, RingReader};
use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

mod counting_allocator;

mod events {
    usertrace::tracepoints! {
        provider ut_shm_alloc;
        pub fn request(id: u64, path: &str, latency: f64, ok: bool);
    }
}

#[test]
fn enabled_emits_into_the_ring_allocate_nothing() {
    if !in_child("enabled_emits_into_the_ring_allocate_nothing", &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    let dynamic = DynamicTracepoint::new(
        "ut_shm_alloc_dynamic",
        vec![Field::new("n", FieldType::U32), Field::new("s", FieldType::Str), Field::new("b", FieldType::Bytes)],
        RegisterOptions::default(),
    )
    .unwrap();
    dynamic.register().unwrap();
    events::PROVIDER.register().unwrap();
    set_word(dynamic.tracepoint().enable_word(), 1);
    set_word(events::request::TRACEPOINT.enable_word(), 1);
    assert!(dynamic.enabled() && events::request::enabled());

    let allocated = counting_allocator::allocations_in(|| {
        // The first emit makes the ring: that allocates nothing either.
        let payload = [7u8; 300];
        for i in 0..1000u32 {
            dynamic.emit(&[Value::U32(i), Value::Str("a string of some length ✓"), Value::Bytes(&payload)]).unwrap();
            usertrace::emit!(events::request(u64::from(i), "/index.html", 1.25, true)).unwrap();
        }
    });
    assert_eq!(allocated, 0, "emits allocated");

    // They went somewhere: the ring has records, and counted what it dropped.
    let ring = RingReader::open(&ring_paths(std::process::id())[0]);
    assert_eq!(ring.drain().len() as u64 + ring.lost(), 2000);
}

//! An enabled emit is one `writev` and no heap allocation: a counting
//! allocator watches this thread while events of every kind are written.
//! Needs user_events (runs in the guest kernel).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds GlobalAlloc::alloc's contract for
        // `layout`, which is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from System (every allocation here does), with
        // this `layout`, as GlobalAlloc::dealloc's caller promises.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as for dealloc; `new_size` is the caller's, under
        // GlobalAlloc::realloc's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

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
    COUNTING.with(|c| c.set(true));
    for i in 0..1000u32 {
        dynamic.emit(&[Value::U32(i), Value::Str("a string of some length ✓"), Value::Bytes(&payload)]).unwrap();
        usertrace::emit!(events::request(u64::from(i), "/index.html", 1.25, true)).unwrap();
    }
    COUNTING.with(|c| c.set(false));
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed), 0, "emits allocated");

    for event in ["ut_alloc_dynamic", events::request::NAME] {
        std::fs::write(tracefs.join("events/user_events").join(event).join("enable"), "0").unwrap();
    }
}

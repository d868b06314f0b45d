//! An enabled emit through shared memory allocates nothing: a counting
//! allocator watches this thread while events of several kinds go into its
//! ring. The shared-memory twin of emitting_allocates_nothing.rs, which
//! needs user_events; this runs on any Linux host.

mod shm_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use shm_support::{in_child, ring_paths, set_word, RingReader};
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

    COUNTING.with(|c| c.set(true));
    // The first emit makes the ring: that allocates nothing either.
    let payload = [7u8; 300];
    for i in 0..1000u32 {
        dynamic.emit(&[Value::U32(i), Value::Str("a string of some length ✓"), Value::Bytes(&payload)]).unwrap();
        usertrace::emit!(events::request(u64::from(i), "/index.html", 1.25, true)).unwrap();
    }
    COUNTING.with(|c| c.set(false));
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed), 0, "emits allocated");

    // They went somewhere: the ring has records, and counted what it dropped.
    let ring = RingReader::open(&ring_paths(std::process::id())[0]);
    assert_eq!(ring.drain().len() as u64 + ring.lost(), 2000);
}

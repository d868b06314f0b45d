use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Tracepoint};

use crate::support::{event_exists, set_ftrace, unique_name};

fn word(tp: &Tracepoint) -> u32 {
    // SAFETY: the enable word lives as long as `tp`; a volatile read sees
    // what the kernel wrote.
    unsafe { std::ptr::read_volatile(tp.enable_word()) }
}

#[test]
fn unregister_clears_the_bit_and_a_later_enable_leaves_that_memory_alone() {
    let name = unique_name("unreg");
    let fields = vec![Field::new("x", FieldType::U32)];
    // `keeper` keeps the event alive after `tp` unregisters.
    let keeper = DynamicTracepoint::new(&name, fields.clone(), RegisterOptions::default()).unwrap();
    keeper.register().unwrap();
    let tp = DynamicTracepoint::new(&name, fields, RegisterOptions::default()).unwrap();
    tp.register().unwrap();

    set_ftrace(&name, true);
    assert_eq!(word(tp.tracepoint()), 1);
    tp.unregister().unwrap();
    assert_eq!(word(tp.tracepoint()), 0, "unregister clears the bit");
    assert!(!tp.enabled());

    // Toggle the event: the kernel updates keeper's word, never tp's.
    set_ftrace(&name, false);
    set_ftrace(&name, true);
    assert!(keeper.enabled());
    assert_eq!(word(tp.tracepoint()), 0, "the kernel wrote into unregistered memory");
    tp.emit(&[usertrace::Value::U32(1)]).unwrap();
    set_ftrace(&name, false);

    // And it can register again.
    tp.register().unwrap();
    set_ftrace(&name, true);
    assert!(tp.enabled());
    set_ftrace(&name, false);
    assert!(event_exists(&name));
}

#[test]
fn a_dropped_tracepoint_is_unregistered_before_its_memory_is_reused() {
    let name = unique_name("dropped");
    let fields = vec![Field::new("x", FieldType::U64)];
    let keeper = DynamicTracepoint::new(&name, fields.clone(), RegisterOptions::default()).unwrap();
    keeper.register().unwrap();
    set_ftrace(&name, true);

    // Register and drop many, so the allocator hands their memory out again.
    for _ in 0..64 {
        let tp = DynamicTracepoint::new(&name, fields.clone(), RegisterOptions::default()).unwrap();
        tp.register().unwrap();
        assert!(tp.enabled());
    }
    // Canaries in freshly allocated memory of the same size class.
    let canaries: Vec<Box<[u64; 8]>> = (0..256).map(|_| Box::new([0u64; 8])).collect();
    set_ftrace(&name, false);
    set_ftrace(&name, true);
    set_ftrace(&name, false);
    assert!(canaries.iter().all(|c| c.iter().all(|&w| w == 0)), "the kernel wrote into reused memory");
}

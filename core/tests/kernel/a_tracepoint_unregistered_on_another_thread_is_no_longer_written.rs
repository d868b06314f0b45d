//! `DIAG_IOCSUNREG` looks for the enabler only in the calling thread's
//! `user_event_mm`: a tracepoint registered on one thread and dropped on
//! another must still be unregistered, or the kernel goes on writing
//! memory its owner has freed.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;

use usertrace::{Definition, DynamicTracepoint, ExternalTracepoint, Field, FieldType, RegisterOptions};

use crate::support::{set_ftrace, unique_name};

#[test]
fn an_external_tracepoint_dropped_on_another_thread_than_registered_it_is_no_longer_written() {
    let name = unique_name("dropped_elsewhere");
    let fields = vec![Field::new("n", FieldType::U32)];
    // The caller's word, as a C program's struct: kept alive (leaked) by
    // the test, so that a kernel write after the drop is seen, not a
    // write into freed memory.
    let word: &'static AtomicU32 = Box::leak(Box::new(AtomicU32::new(0)));
    let definition = Definition::new(&name, fields.clone()).unwrap();
    // SAFETY: the word is leaked (never freed, never moves) and only
    // accessed atomically.
    let tp = unsafe { ExternalTracepoint::new(NonNull::from(word), definition, RegisterOptions::default()) };

    // Registered on thread A, which lives on until the end of the test,
    // so that its registration is not lost with it.
    let (registered, done) = (mpsc::channel(), mpsc::channel::<()>());
    let tp = std::thread::scope(|s| {
        let (tp, registered_tx, done_rx) = (tp, registered.0, done.1);
        let a = s.spawn(move || {
            tp.register().unwrap();
            registered_tx.send(tp).unwrap();
            let _ = done_rx.recv();
        });
        let tp = registered.1.recv().unwrap();
        // `keeper` keeps the event alive after `tp` goes.
        let keeper = DynamicTracepoint::new(&name, fields, RegisterOptions::default()).unwrap();
        keeper.register().unwrap();
        set_ftrace(&name, true);
        assert_eq!(word.load(Ordering::Relaxed), 1, "registered on thread A, the word is written");
        set_ftrace(&name, false);

        // Dropped here, on the test's own thread.
        drop(tp);
        assert_eq!(word.load(Ordering::Relaxed), 0);
        set_ftrace(&name, true);
        let written = word.load(Ordering::Relaxed);
        assert!(keeper.enabled());
        set_ftrace(&name, false);
        done.0.send(()).unwrap();
        a.join().unwrap();
        written
    });
    assert_eq!(tp, 0, "the kernel wrote the word of a tracepoint dropped on another thread than registered it");
}

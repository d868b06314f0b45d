//! A fork child gets the enablers of the forking thread's `user_event_mm`
//! only (`user_event_mm_dup`): a child forked by a thread that never
//! registered anything must still have its tracepoints switched on.

use std::sync::mpsc;

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

use crate::support::{clear_trace, set_ftrace, trace_lines, unique_name};

#[test]
fn a_child_forked_by_another_thread_than_registered_gets_its_tracepoints_enabled() {
    let name = unique_name("fork_other");
    let tp = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U32)], RegisterOptions::default()).unwrap();
    let (registered, done) = (mpsc::channel::<()>(), mpsc::channel::<()>());
    std::thread::scope(|s| {
        // Registered on thread A, which lives on meanwhile (so the parent's
        // registration stands either way); the test's thread forks.
        let (tp, registered_tx, done_rx) = (&tp, registered.0, done.1);
        s.spawn(move || {
            tp.register().unwrap();
            registered_tx.send(()).unwrap();
            let _ = done_rx.recv();
        });
        registered.1.recv().unwrap();
        let mut go = [0; 2];
        // SAFETY: a valid array of two descriptors for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(go.as_mut_ptr()) }, 0);
        // SAFETY: the child reads a pipe, loads the word, makes one writev
        // and leaves with _exit; it takes no lock.
        let child = unsafe { libc::fork() };
        assert!(child >= 0);
        if child == 0 {
            let mut byte = 0u8;
            // SAFETY: reads one byte into a valid buffer.
            unsafe { libc::read(go[0], (&raw mut byte).cast(), 1) };
            let code = if tp.enabled() && tp.emit(&[Value::U32(7)]).is_ok() { 0 } else { 1 };
            // SAFETY: leaves the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        // Off at the fork, on after it: only an enabler in the child writes
        // the child's copy of the word.
        set_ftrace(&name, true);
        clear_trace();
        // SAFETY: writes one byte from a valid buffer.
        assert_eq!(unsafe { libc::write(go[1], [1u8].as_ptr().cast(), 1) }, 1);
        let mut status = 0;
        // SAFETY: waits for our own child.
        assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
        set_ftrace(&name, false);
        done.0.send(()).unwrap();
        // SAFETY: our own descriptors, closed once.
        unsafe {
            libc::close(go[0]);
            libc::close(go[1]);
        }
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child did not see its tracepoint enabled");
        let lines = trace_lines(&name, &["x"]);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!((lines[0].pid, lines[0].fields["x"].as_str()), (child as u32, "7"));
    });
}

use std::process::Command;

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

use crate::support::{assert_comm, clear_trace, gettid, set_ftrace, trace_lines, unique_name};

fn tp_child() -> std::path::PathBuf {
    // Examples are built with the tests: target/<profile>/examples/.
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("examples/tp_child")
}

#[test]
fn a_forked_child_sees_the_bit_and_its_events_carry_its_pid() {
    let name = unique_name("fork");
    let tp = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U32)], RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    set_ftrace(&name, true);
    clear_trace();

    // SAFETY: the child only reads memory, makes one write syscall and exits
    // with _exit; no locks are taken.
    let child = unsafe { libc::fork() };
    assert!(child >= 0);
    if child == 0 {
        let code = if tp.enabled() && tp.emit(&[Value::U32(7)]).is_ok() { 0 } else { 1 };
        // SAFETY: leaves the child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child saw the bit and emitted");
    tp.emit(&[Value::U32(8)]).unwrap();
    set_ftrace(&name, false);

    let lines = trace_lines(&name, &["x"]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!((lines[0].pid, lines[0].fields["x"].as_str()), (child as u32, "7"));
    assert_eq!((lines[1].pid, lines[1].fields["x"].as_str()), (gettid(), "8"));
}

#[test]
fn after_exec_the_new_image_registers_afresh_and_emits() {
    let name = unique_name("exec");
    let keeper = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U32)], RegisterOptions::default()).unwrap();
    keeper.register().unwrap();
    set_ftrace(&name, true);
    clear_trace();

    let out = Command::new(tp_child()).args(["emit", &name, "42"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "enabled=true");
    set_ftrace(&name, false);

    let lines = trace_lines(&name, &["x"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_comm(&lines[0], "tp_child");
    assert_eq!(lines[0].fields["x"], "42");
}

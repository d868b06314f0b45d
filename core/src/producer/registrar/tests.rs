use std::ffi::CString;

use super::*;

/// The threads of this process named `name`, by id.
fn threads_named(name: &str) -> Vec<String> {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap().flatten();
    tasks
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .map(|t| t.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Whether signal `signal` is blocked in thread `tid` (`SigBlk` of its status).
fn blocked(tid: &str, signal: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigBlk:")).unwrap().trim();
    u64::from_str_radix(mask, 16).unwrap() & (1 << (signal - 1)) != 0
}

#[test]
fn calls_from_many_threads_run_on_one_registrar_thread_that_no_signal_reaches() {
    let answers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let name_args = CString::new("ut_registrar_host x u32").unwrap();
                // No descriptor: the kernel's answer, from the registrar.
                (register(-1, 0x1000, &name_args, 0), unregister(-1, 0x1000))
            })
        })
        .map(|t| t.join().unwrap())
        .collect();
    for answer in answers {
        assert_eq!(answer, (Err(Errno(libc::EBADF)), Err(Errno(libc::EBADF))));
    }
    let registrars = threads_named("usertrace-reg");
    assert_eq!(registrars.len(), 1, "one registrar per process");
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGUSR1, libc::SIGCHLD, libc::SIGPIPE] {
        assert!(blocked(&registrars[0], signal as u32), "signal {signal} is not blocked on the registrar");
    }
    // A failed registration is not kept for a fork child to make again.
    assert!(WORDS.lock().words.iter().all(|w| w.address != 0x1000));
}

//! The attach handshake may keep a registration waiting (up to 5 s) for the
//! recorder that launched the program. That wait must not hold the lock
//! every registration takes: another thread registering meanwhile goes
//! straight through.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use usertrace_consumer::AttachRequests;

use crate::consumer_support::*;

#[test]
fn another_thread_registers_while_one_waits_in_the_handshake() {
    let wanted = unique("ut_wanted");
    let other = unique("ut_other");
    let requests = AttachRequests::new().unwrap();
    // Only `wanted` is asked for: `other` registers without a handshake.
    let (fd, env) = requests.for_child(std::slice::from_ref(&wanted));
    let mut command = Command::new(ut_emit());
    command.args(["register-while-announcing", &wanted, &other]).envs(env).stdin(Stdio::piped()).stdout(Stdio::piped());
    // SAFETY: runs in the forked child before exec; fcntl is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();

    // The announcement says `wanted` is registered and now waiting for us.
    let deadline = Instant::now() + Duration::from_secs(30);
    while requests.drain() == 0 {
        assert!(Instant::now() < deadline, "the producer never announced {wanted}");
        std::thread::sleep(Duration::from_millis(5));
    }
    writeln!(child.stdin.take().unwrap(), "go").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(line.trim(), "other registered while wanted waited: true");
}

//! `usertrace record ... | head`: once the reader of standard output has
//! gone, the printing ends quietly, as for every command, and `record`
//! still exits with the recorded command's status and accounts for every
//! event on stderr. Before, it said "writing events failed" and exited 1.

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use crate::support::*;

#[test]
fn record_into_a_pipe_whose_reader_has_gone_ends_quietly() {
    let mut fds = [0; 2];
    // SAFETY: pipe(2) writes two new descriptors into the array it is
    // given, which has room for two.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just opened by pipe(2), and nothing
    // else owns them.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // The reader is gone before the first line: every write sees EPIPE.
    drop(reader);

    let name = unique("pipe");
    // The command keeps its own output off the closed pipe; exec keeps
    // its pid, so its events are the command's.
    let command = format!("exec {} rename {name} > /dev/null", ut_emit().display());
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}*"), "--format", "json", "--", "/bin/sh", "-c", &command])
        .stdout(Stdio::from(writer))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("failed"), "no write failure is reported: {stderr}");
    assert!(stderr.contains("3 events, 0 lost"), "{stderr}");
}

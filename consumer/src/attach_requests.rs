//! The recorder's side of the attach handshake: a socket the command's
//! producers announce their events on, so `record -- CMD` attaches at once
//! instead of at its next tracefs scan. The producer's side, and why the
//! handshake exists, are in the core crate (`usertrace::ATTACH_FD_ENV`).
//!
//! # Safety
//! Two calls: `socketpair` into an array with room for both descriptors,
//! which are then owned here, and `recv` into a buffer of the length given.
#![allow(unsafe_code)]

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use usertrace::{ATTACH_FD_ENV, ATTACH_PATTERNS_ENV};

/// Recorder side: the socket the command's producers announce events on.
#[derive(Debug)]
pub struct AttachRequests {
    ours: OwnedFd,
    theirs: OwnedFd,
}

impl AttachRequests {
    /// `socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC)`: one message per
    /// announcement, and closed on exec unless passed on deliberately.
    pub fn new() -> std::io::Result<Self> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors socketpair writes.
        let rc = unsafe {
            libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0, fds.as_mut_ptr())
        };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: socketpair returned two new descriptors nothing else owns.
        let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(AttachRequests { ours, theirs })
    }

    /// The descriptor the command must inherit (clear its close-on-exec in
    /// the child only), and the environment that names it.
    pub fn for_child(&self, patterns: &[String]) -> (RawFd, [(&'static str, String); 2]) {
        let fd = self.theirs.as_raw_fd();
        (fd, [(ATTACH_FD_ENV, fd.to_string()), (ATTACH_PATTERNS_ENV, patterns.join(" "))])
    }

    /// Readable when an announcement is waiting.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.ours.as_fd()
    }

    /// Reads every waiting announcement; returns how many there were.
    pub fn drain(&self) -> usize {
        let mut buf = [0u8; 512];
        let mut count = 0;
        loop {
            // SAFETY: receives into a buffer of the given length.
            let n = unsafe { libc::recv(self.ours.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
            if n <= 0 {
                return count;
            }
            count += 1;
        }
    }
}

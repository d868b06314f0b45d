//! The attach handshake between `usertrace record -- CMD` and the command.
//!
//! A tracepoint exists in tracefs only once its process registers it, so a
//! recorder that polls tracefs attaches late and the first events go
//! nowhere. When the recorder launches the command itself, it passes down a
//! socket (`USERTRACE_ATTACH_FD`) and its patterns (`USERTRACE_ATTACH_PATTERNS`).
//! A usertrace producer that registers a matching event sends its name on
//! the socket, which wakes the recorder at once, and waits (at most
//! [`WAIT_LIMIT`]) until its enable bit says the recorder is attached.
//! Producers written without usertrace, or events that match no pattern,
//! are attached on the recorder's next tracefs scan instead.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::consumer::Pattern;

/// Names the inherited socket's descriptor number.
pub const FD_ENV: &str = "USERTRACE_ATTACH_FD";
/// The recorder's `-e` patterns, separated by spaces.
pub const PATTERNS_ENV: &str = "USERTRACE_ATTACH_PATTERNS";
/// Longest a registration waits for the recorder to attach.
pub const WAIT_LIMIT: Duration = Duration::from_secs(2);

struct Recorder {
    fd: RawFd,
    patterns: Vec<Pattern>,
}

fn recorder() -> Option<&'static Recorder> {
    static RECORDER: OnceLock<Option<Recorder>> = OnceLock::new();
    RECORDER
        .get_or_init(|| {
            let fd: RawFd = std::env::var(FD_ENV).ok()?.parse().ok()?;
            let patterns = std::env::var(PATTERNS_ENV).ok()?;
            let patterns = patterns.split_whitespace().filter_map(|p| Pattern::parse(p).ok()).collect();
            Some(Recorder { fd, patterns })
        })
        .as_ref()
}

/// Producer side: if a recorder launched us and wants `event`, tell it and
/// wait until `attached()` (the enable bit) or the limit.
pub(crate) fn announce(event: &str, attached: impl Fn() -> bool) {
    let Some(recorder) = recorder() else { return };
    let wanted = recorder.patterns.iter().any(|p| p.matches("user_events", event) || p.matches("user_events_multi", event));
    if !wanted || attached() {
        return;
    }
    // SAFETY: sends from a valid buffer; MSG_NOSIGNAL turns a recorder that
    // has gone into EPIPE instead of SIGPIPE, and a failure changes nothing.
    let sent = unsafe {
        libc::send(recorder.fd, event.as_ptr().cast(), event.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT)
    };
    if sent < 0 {
        return;
    }
    let deadline = Instant::now() + WAIT_LIMIT;
    while !attached() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(500));
    }
}

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
        (fd, [(FD_ENV, fd.to_string()), (PATTERNS_ENV, patterns.join(" "))])
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

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
//!
//! This is the producer's side; the recorder's (`AttachRequests`) is in the
//! consumer crate, and the two share only the variables named here.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::pattern::Pattern;
use crate::sys::{self, RawFd};

/// Names the inherited socket's descriptor number (the attach handshake
/// between `usertrace record -- CMD` and the producers CMD starts).
pub const ATTACH_FD_ENV: &str = "USERTRACE_ATTACH_FD";
/// The recorder's `-e` patterns, separated by spaces, for the attach
/// handshake.
pub const ATTACH_PATTERNS_ENV: &str = "USERTRACE_ATTACH_PATTERNS";
/// Longest a registration waits for the recorder to attach. The wait ends
/// as soon as the enable bit flips (milliseconds on a real machine), so the
/// limit only binds when the recorder is slow or cannot attach: 2 s proved
/// too short on a loaded 2-CPU host running the guest kernel under
/// emulation, where an event registered right after another was missed.
pub(crate) const WAIT_LIMIT: Duration = Duration::from_secs(5);

struct Recorder {
    fd: RawFd,
    patterns: Vec<Pattern>,
}

fn recorder() -> Option<&'static Recorder> {
    static RECORDER: OnceLock<Option<Recorder>> = OnceLock::new();
    RECORDER
        .get_or_init(|| {
            let fd: RawFd = std::env::var(ATTACH_FD_ENV).ok()?.parse().ok()?;
            let patterns = std::env::var(ATTACH_PATTERNS_ENV).ok()?;
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
    // A recorder that has gone is an error (EPIPE, not SIGPIPE), and a
    // failure changes nothing: the event is attached on its next scan.
    if sys::send_nonblocking(recorder.fd, event.as_bytes()).is_err() {
        return;
    }
    let deadline = Instant::now() + WAIT_LIMIT;
    while !attached() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(500));
    }
}

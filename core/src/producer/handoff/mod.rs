//! Waiting for a recorder to hand over `user_events_data`: user_events in a
//! pod that has no tracefs.
//!
//! A producer whose transport is `user_events` by setting
//! (`USERTRACE_TRANSPORT=user_events`), where there is no
//! `user_events_data` to open (tracefs not mounted, or no file in it),
//! does not fail its registrations: it keeps them here, pending, and
//! listens for a recorder ([`listener`]). Meanwhile a pending tracepoint's
//! enable word reads 0 (one load, off) and an emit does nothing. A
//! recorder run as root on the node connects and sends a descriptor of the
//! node's `user_events_data`; the listener checks it, installs it as the
//! process's data descriptor and registers every pending tracepoint with
//! it at once. From then on the kernel writes their words as for any
//! registration: they turn on as soon as a tracer attaches.
//!
//! A permission failure (`EACCES`) does not wait: `user_events_data` is
//! there and its owner can grant it, as `auto` keeps user_events for that
//! case rather than hide the problem.
//!
//! The kernel's write index reaches a tracepoint's registration lazily:
//! the table below is keyed by the enable word's address (which stays put
//! while registered, by the registration's contract), and the first emit
//! after the word turns on adopts it ([`Handoff::adopt`]). So nothing here
//! points at a registration, which may move (an `ExternalTracepoint`).
//!
//! After a fork the child has the table (its words are at the same
//! addresses) but not the listening thread. The socket is the parent's:
//! the child drops its copy and listens under its own name at its next
//! pending registration, never in the fork handler.
//!
//! Lock order: the registration lock, then [`PENDING`], then the data
//! file's. The listening thread takes only the last two. Registering
//! waits for the registrar thread (`producer::registrar`) under them; it
//! takes none of them, so that cannot deadlock.

// Off Linux nothing listens (`awaits` is false there), so what only the
// listening thread calls is unused.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

#[cfg(target_os = "linux")]
mod listener;
#[cfg(not(target_os = "linux"))]
#[path = "unsupported.rs"]
mod listener;

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::AtomicU32;
use std::sync::{Mutex, MutexGuard};

use super::data_file;
use super::registrar;
use crate::status::{Availability, Status};
use crate::sys::{self, OwnedFd};
use crate::transport;
use crate::Error;

#[cfg(target_os = "linux")]
pub use listener::{bind_listener, check_descriptor, receive_descriptor};

/// Why a connection's message or descriptor was refused, for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// Failed registrations kept for `transport()` to name.
const MAX_FAILURES_KEPT: usize = 4;

/// One tracepoint waiting for the descriptor.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The enable word's address.
    pub(crate) word: usize,
    /// The kernel's `name field;field`.
    pub(crate) name_args: CString,
    pub(crate) flags: u16,
    /// Set once registered with the handed descriptor.
    pub(crate) index: Option<u32>,
}

/// Where this process listens, and who made it (a fork child's copy is
/// its parent's).
#[derive(Debug)]
pub(crate) struct Listening {
    pub(crate) path: PathBuf,
    pub(crate) owner: u32,
    /// The listening socket, held (never read: the accept thread uses
    /// its number while it runs, and has it dropped when it ends).
    #[allow(dead_code)]
    pub(crate) fd: Option<OwnedFd>,
}

/// The state of the handoff, one per process.
#[derive(Debug, Default)]
pub(crate) struct Handoff {
    entries: Vec<Entry>,
    listening: Option<Listening>,
    /// Why there was nothing to open here (a verdict's name).
    why: &'static str,
    /// Set once a descriptor was installed: no other is taken.
    installed: bool,
    registered: usize,
    failures: Vec<String>,
    /// The last descriptor or message refused, and why.
    refused: Option<String>,
}

/// What [`wait`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// The registration waits here.
    Pending,
    /// A descriptor arrived meanwhile: register with it now.
    Arrived,
}

/// What the table says of an enable word.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum WordState {
    Waiting,
    /// Registered with the handed descriptor, not adopted yet.
    Registered(u32),
    /// Not in the table: adopted, cancelled, or its registration failed.
    Unknown,
}

static PENDING: Mutex<Handoff> = Mutex::new(Handoff::new());

fn pending() -> MutexGuard<'static, Handoff> {
    PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether a registration that met `status` waits for a descriptor: the
/// setting asks for user_events, there is no `user_events_data` here at
/// all (not one this user may not open), and the kernel's build config,
/// the node's in a container, does not say it has none (then no recorder
/// could hand one over).
pub(crate) fn awaits(status: &Status) -> bool {
    let nothing_here = matches!(status.availability, Availability::TracefsNotMounted | Availability::UserEventsMissing);
    let kernel_lacks = status.kernel_config.as_ref().is_some_and(|c| c.lacks_user_events());
    nothing_here && !kernel_lacks && sys::OS_HAS_USER_EVENTS && transport::forced_user_events()
}

/// Keeps the registration of `word` pending until a descriptor arrives,
/// listening for one if this process does not yet.
pub(crate) fn wait(word: &AtomicU32, name_args: &str, flags: u16, status: &Status) -> Result<Wait, Error> {
    let mut handoff = pending();
    if handoff.installed {
        return Ok(Wait::Arrived);
    }
    if handoff.listening.as_ref().is_none_or(|l| l.owner != sys::pid()) {
        // None yet, or the parent's (a fork child): its copy is dropped
        // here, which leaves the parent's socket as it is.
        handoff.listening = None;
        handoff.listening = Some(listener::listen()?);
        handoff.why = status.availability.name();
    }
    let name_args = CString::new(name_args).expect("validated names contain no NUL");
    handoff.add(Entry { word: word.as_ptr() as usize, name_args, flags, index: None });
    Ok(Wait::Pending)
}

/// Installs `fd`, handed over by a recorder, and registers every pending
/// tracepoint with it; Err: why it was refused.
pub(crate) fn install(fd: OwnedFd) -> Result<(), String> {
    let mut handoff = pending();
    handoff.check_first()?;
    data_file::install_handed(fd)?;
    handoff.register_all(|entry| {
        data_file::with_fd_for_registration(|fd| {
            registrar::register(fd, entry.word as u64, &entry.name_args, entry.flags).map_err(|errno| Error::Kernel {
                op: "registration",
                event: entry.name_args.to_string_lossy().split(' ').next().unwrap_or_default().to_owned(),
                errno,
            })
        })
        .map_err(|e| e.to_string())
    });
    Ok(())
}

/// Notes a refused descriptor or message, for `transport()`.
pub(crate) fn refused(why: String) {
    pending().refused = Some(why);
}

/// The listening thread has stopped: the socket is gone.
pub(crate) fn stopped_listening() {
    let mut handoff = pending();
    if handoff.listening.as_ref().is_some_and(|l| l.owner == sys::pid()) {
        handoff.listening = None;
    }
}

/// The kernel's write index for `word` if the handed descriptor
/// registered it; `set` runs with it under the lock, and the word leaves
/// the table.
pub(crate) fn adopt(word: &AtomicU32, set: impl FnOnce(u32)) -> Option<u32> {
    pending().adopt(word.as_ptr() as usize, set)
}

/// Where `word` stands.
pub(crate) fn word_state(word: &AtomicU32) -> WordState {
    pending().word_state(word.as_ptr() as usize)
}

/// Takes `word` out of the table; Some(index) if the kernel has it
/// registered (the caller unregisters it).
pub(crate) fn cancel(word: &AtomicU32) -> Option<u32> {
    pending().cancel(word.as_ptr() as usize)
}

/// What `transport()` adds to its reason while a handoff is under way or
/// done; None if there was none.
pub(crate) fn describe() -> Option<String> {
    pending().describe()
}

/// At exit: the socket goes, if it is this process's. Never waits for
/// the lock (the listening thread may hold it).
pub(crate) fn remove_socket_at_exit() {
    let Ok(handoff) = PENDING.try_lock() else { return };
    if let Some(listening) = handoff.listening.as_ref().filter(|l| l.owner == sys::pid()) {
        let _ = std::fs::remove_file(&listening.path);
    }
}

impl Handoff {
    pub(crate) const fn new() -> Handoff {
        Handoff {
            entries: Vec::new(),
            listening: None,
            why: "",
            installed: false,
            registered: 0,
            failures: Vec::new(),
            refused: None,
        }
    }

    /// Adds `entry`, once per word.
    pub(crate) fn add(&mut self, entry: Entry) {
        self.entries.retain(|e| e.word != entry.word);
        self.entries.push(entry);
    }

    /// Refuses a descriptor after the first.
    pub(crate) fn check_first(&self) -> Result<(), String> {
        match self.installed {
            true => Err("this process already holds a user_events_data descriptor; a second is refused".into()),
            false => Ok(()),
        }
    }

    /// Registers every pending entry with `register` (the kernel's write
    /// index, or why not); a failed one leaves the table, named.
    pub(crate) fn register_all(&mut self, mut register: impl FnMut(&Entry) -> Result<u32, String>) {
        self.installed = true;
        let mut failures = Vec::new();
        for entry in &mut self.entries {
            match register(entry) {
                Ok(index) => entry.index = Some(index),
                Err(why) => failures.push(why),
            }
        }
        self.entries.retain(|e| e.index.is_some());
        self.registered += self.entries.len();
        self.failures.extend(failures.into_iter().take(MAX_FAILURES_KEPT));
    }

    pub(crate) fn adopt(&mut self, word: usize, set: impl FnOnce(u32)) -> Option<u32> {
        let at = self.entries.iter().position(|e| e.word == word && e.index.is_some())?;
        let index = self.entries.swap_remove(at).index?;
        set(index);
        Some(index)
    }

    pub(crate) fn word_state(&self, word: usize) -> WordState {
        match self.entries.iter().find(|e| e.word == word) {
            Some(Entry { index: Some(index), .. }) => WordState::Registered(*index),
            Some(_) => WordState::Waiting,
            None => WordState::Unknown,
        }
    }

    pub(crate) fn cancel(&mut self, word: usize) -> Option<u32> {
        let at = self.entries.iter().position(|e| e.word == word)?;
        self.entries.swap_remove(at).index
    }

    pub(crate) fn describe(&self) -> Option<String> {
        let refused = self.refused.as_ref().map(|r| format!("; refused: {r}")).unwrap_or_default();
        if self.installed {
            let failed = match self.failures.as_slice() {
                [] => String::new(),
                failures => format!("; failed: {}", failures.join("; ")),
            };
            return Some(format!("user_events_data handed over by a recorder; {} pending tracepoints registered{failed}", self.registered));
        }
        let listening = self.listening.as_ref()?;
        Some(format!(
            "no user_events_data here ({}); {} tracepoints wait for a descriptor from a recorder, listening on {}{refused}",
            self.why,
            self.entries.len(),
            listening.path.display()
        ))
    }
}

#[cfg(test)]
mod tests;

//! Which way events leave the process: the kernel's user_events, or shared
//! memory that a recorder reads (see [`shm_layout`](crate::shm_layout)).
//!
//! `USERTRACE_TRANSPORT` picks it, read once per process:
//! - `auto` (the default, also when unset or empty): user_events when
//!   [`status()`](crate::status()) finds them usable; shared memory when
//!   the kernel has none to offer (its build config says so, tracefs is
//!   not mounted, or it has no `user_events_data`), and the reason names
//!   `status()`'s verdict. A user_events that exists but may not be opened
//!   keeps user_events, and its diagnosis: shared memory would hide a
//!   permission problem that its owner can fix.
//! - `user_events`: the kernel only, as before there was a choice. Where
//!   there is no `user_events_data` to open (a pod with no tracefs),
//!   registrations wait, off, for a recorder on the node to hand one over
//!   (see `producer::handoff`), and the reason says where it listens.
//! - `shm`: shared memory only.
//!
//! The choice is made at the first registration and then kept, so that one
//! process never splits its events between two transports; only a verdict
//! that may change (a permission, a failed open) is looked at again.

use std::fmt;
use std::sync::OnceLock;

use crate::status::{self, Availability, Status};
use crate::sys;
use crate::Error;

/// The variable that picks the transport.
pub const TRANSPORT_ENV: &str = "USERTRACE_TRANSPORT";

/// What [`TRANSPORT_ENV`] may be set to.
const ALLOWED: &str = "auto, user_events or shm";

/// A way for events to reach a recorder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The kernel's user_events: `writev` into the trace buffers.
    UserEvents,
    /// Files in `/dev/shm/usertrace-UID`: a registry and one ring per thread.
    SharedMemory,
}

impl Transport {
    /// The name `USERTRACE_TRANSPORT` gives it: `user_events` or `shm`.
    pub const fn name(self) -> &'static str {
        match self {
            Transport::UserEvents => "user_events",
            Transport::SharedMemory => "shm",
        }
    }
}

/// The transport registrations use, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportChoice {
    /// The transport.
    pub transport: Transport,
    /// Why, in a sentence: the setting, and for `auto` what the probe found.
    pub reason: String,
}

impl fmt::Display for TransportChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "transport {}: {}", self.transport.name(), self.reason)
    }
}

/// The transport this process's registrations use (or the next one would),
/// and why; an invalid `USERTRACE_TRANSPORT` is [`Error::InvalidSetting`].
///
/// ```
/// match usertrace::transport() {
///     Ok(choice) => println!("{choice}"),
///     Err(e) => eprintln!("{e}"),
/// }
/// ```
pub fn transport() -> Result<TransportChoice, Error> {
    let mut choice = chosen()?;
    // A handoff under way (or done) is what user_events means here now.
    if let Some(handoff) = crate::producer::handoff::describe().filter(|_| choice.transport == Transport::UserEvents) {
        choice.reason = format!("{}: {handoff}", choice.reason);
    }
    Ok(choice)
}

/// The choice, without what a handoff adds: for registrations.
pub(crate) fn chosen() -> Result<TransportChoice, Error> {
    if let Some(choice) = CHOSEN.get() {
        return Ok(choice.clone());
    }
    let choice = choose(setting()?, status::status);
    if choice.1 {
        return Ok(CHOSEN.get_or_init(|| choice.0).clone());
    }
    Ok(choice.0)
}

/// Kept once made for good (see the module doc).
static CHOSEN: OnceLock<TransportChoice> = OnceLock::new();

/// What `USERTRACE_TRANSPORT` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Setting {
    Auto,
    Forced(Transport),
}

/// Whether `USERTRACE_TRANSPORT` says `user_events`: a registration with
/// no `user_events_data` here then waits for a recorder to hand one over
/// (see `producer::handoff`).
pub(crate) fn forced_user_events() -> bool {
    setting() == Ok(Setting::Forced(Transport::UserEvents))
}

fn setting() -> Result<Setting, Error> {
    static SETTING: OnceLock<Result<Setting, Error>> = OnceLock::new();
    SETTING.get_or_init(|| parse_setting(std::env::var_os(TRANSPORT_ENV).as_deref())).clone()
}

pub(crate) fn parse_setting(value: Option<&std::ffi::OsStr>) -> Result<Setting, Error> {
    let invalid = |value: String| Error::InvalidSetting { variable: TRANSPORT_ENV, value, allowed: ALLOWED };
    let Some(value) = value else { return Ok(Setting::Auto) };
    match value.to_str() {
        Some("" | "auto") => Ok(Setting::Auto),
        Some("user_events") => Ok(Setting::Forced(Transport::UserEvents)),
        Some("shm") => Ok(Setting::Forced(Transport::SharedMemory)),
        _ => Err(invalid(value.to_string_lossy().into_owned())),
    }
}

/// The choice for `setting`, and whether it is final. `probe` runs only
/// for `auto`.
pub(crate) fn choose(setting: Setting, probe: impl FnOnce() -> Status) -> (TransportChoice, bool) {
    let forced = |transport| TransportChoice { transport, reason: format!("{TRANSPORT_ENV}={}", transport.name()) };
    let status = match setting {
        Setting::Forced(transport) => return (forced(transport), true),
        Setting::Auto => probe(),
    };
    let auto = |transport, why: String| TransportChoice { transport, reason: format!("{TRANSPORT_ENV}=auto: {why}") };
    match status.availability {
        Availability::Available => (auto(Transport::UserEvents, status.to_string()), true),
        // The kernel has no user_events to offer here.
        Availability::TracefsNotMounted | Availability::UserEventsMissing if sys::OS_HAS_USER_EVENTS => (
            // The verdict's name, not its advice: `status()` says what to do
            // about user_events; this says only why it was not chosen.
            auto(
                Transport::SharedMemory,
                format!("user_events is not available ({}); events go through shared memory in /dev/shm instead", status.availability.name()),
            ),
            true,
        ),
        // Off Linux there is no shared-memory recorder either; and a
        // permission or open failure is for its owner to fix, so it is
        // reported, and looked at again by the next registration.
        _ => (auto(Transport::UserEvents, status.to_string()), false),
    }
}

#[cfg(test)]
mod tests;

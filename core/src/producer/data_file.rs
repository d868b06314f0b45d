//! The process-wide `user_events_data` descriptor.
//!
//! One descriptor serves every tracepoint: write indexes belong to the open
//! file description. It is opened on first registration, and a failed open
//! is not remembered: the next registration tries again.
//!
//! The kernel keeps every event this descriptor ever registered alive until
//! the descriptor is closed, even after unregistration. So when the last
//! registration goes, the descriptor is closed, and the kernel can delete
//! the events; the next registration opens a new one. Closing must not race
//! with an emit that already read a write index: emits count themselves in
//! an [`EmitScope`] (only on the enabled path), and closing waits for them.
//!
//! The descriptor is this module's own, held in [`REGISTRATIONS`]; emits
//! read its number from [`DATA_FD`]. It is dropped (closed) only once no
//! registration refers to it and `wait_for_emits` has seen every emit that
//! read the number leave its [`EmitScope`], so no emit writes to a
//! descriptor reused for something else.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

use super::in_flight::{wait_for_emits, EmitScope};
use crate::status;
use crate::sys::{self, OwnedFd, RawFd};
use crate::Error;

/// The number of `Registrations::fd`, or -1 while there is none.
static DATA_FD: AtomicI32 = AtomicI32::new(-1);

struct Registrations {
    live: usize,
    /// The open descriptor, if any.
    fd: Option<OwnedFd>,
    /// Whether a recorder handed it over (see `handoff`): it is then kept
    /// until exit, as nothing here could open another.
    handed: bool,
}

static REGISTRATIONS: Mutex<Registrations> = Mutex::new(Registrations { live: 0, fd: None, handed: false });

/// Runs `register` with the descriptor (opening it if needed) and counts a
/// success as one live registration.
pub(crate) fn with_fd_for_registration<T>(register: impl FnOnce(RawFd) -> Result<T, Error>) -> Result<T, Error> {
    let mut regs = REGISTRATIONS.lock().unwrap_or_else(|p| p.into_inner());
    let fd = match DATA_FD.load(Ordering::Acquire) {
        fd if fd >= 0 => fd,
        _ => open(&mut regs)?,
    };
    let result = register(fd)?;
    regs.live += 1;
    Ok(result)
}

/// Runs `unregister` with the descriptor; on success, one registration
/// fewer, and the descriptor is closed when none remain.
pub(crate) fn with_fd_for_unregistration(unregister: impl FnOnce(RawFd) -> Result<(), Error>) -> Result<(), Error> {
    let mut regs = REGISTRATIONS.lock().unwrap_or_else(|p| p.into_inner());
    let fd = DATA_FD.load(Ordering::Acquire);
    debug_assert!(fd >= 0, "a registered tracepoint implies an open descriptor");
    unregister(fd)?;
    regs.live = regs.live.saturating_sub(1);
    if regs.live == 0 {
        close_when_idle(&mut regs);
    }
    Ok(())
}

fn open(regs: &mut Registrations) -> Result<RawFd, Error> {
    match status::probe() {
        Ok((owned, _status)) => {
            let fd = sys::as_raw_fd(&owned);
            regs.fd = Some(owned);
            // ATOMICS: Release pairs with the Acquire loads, so a thread that
            // sees the fd (or a registration made after this) sees it open.
            DATA_FD.store(fd, Ordering::Release);
            Ok(fd)
        }
        // The same diagnosis as `status()`, config and all (read once).
        Err(status) => Err(Error::Unavailable(status::weighed(status))),
    }
}

/// Makes `fd`, handed over by a recorder, the process's descriptor;
/// refused if the process has one.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn install_handed(fd: OwnedFd) -> Result<(), String> {
    let mut regs = REGISTRATIONS.lock().unwrap_or_else(|p| p.into_inner());
    if DATA_FD.load(Ordering::Acquire) >= 0 {
        return Err("this process already holds a user_events_data descriptor; a second is refused".into());
    }
    let number = sys::as_raw_fd(&fd);
    regs.fd = Some(fd);
    regs.handed = true;
    // ATOMICS: Release, as in `open`.
    DATA_FD.store(number, Ordering::Release);
    Ok(())
}

/// Closes the descriptor once no emit is using it. Every registration is
/// already cleared, so an emit that starts now will not write; only those
/// that started before can still hold the fd. If they do not drain (a fork
/// can leave a stale count in the child), the fd stays open: a kernel-side
/// leak until exit, never a write to a reused descriptor.
fn close_when_idle(regs: &mut Registrations) {
    // A handed descriptor cannot be opened again: the kernel's events stay
    // (unregistered, unused) until exit closes it.
    if regs.handed || !wait_for_emits() {
        return;
    }
    DATA_FD.store(-1, Ordering::Release);
    // No registration refers to it and no emit is using it: dropping it
    // closes it.
    regs.fd = None;
}

/// Marks one emit in progress while it lives; gives the descriptor.
pub(crate) struct EmitGuard(#[allow(dead_code)] EmitScope);

impl EmitGuard {
    #[inline]
    pub(crate) fn enter() -> Self {
        EmitGuard(EmitScope::enter())
    }

    /// The descriptor; read after checking the registration, inside the guard.
    #[inline]
    pub(crate) fn fd(&self) -> Option<RawFd> {
        let fd = DATA_FD.load(Ordering::Acquire);
        (fd >= 0).then_some(fd)
    }
}

/// The descriptor if open, or a new one; for operations by event name.
pub(crate) fn data_fd() -> Result<RawFd, Error> {
    let mut regs = REGISTRATIONS.lock().unwrap_or_else(|p| p.into_inner());
    match DATA_FD.load(Ordering::Acquire) {
        fd if fd >= 0 => Ok(fd),
        _ => open(&mut regs),
    }
}

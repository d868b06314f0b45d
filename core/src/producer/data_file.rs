//! The process-wide `user_events_data` descriptor.
//!
//! One descriptor serves every tracepoint: write indexes belong to the open
//! file description, so all registrations and writes must use the same one.
//! It is opened on first registration and never closed: closing would not
//! stop the kernel updating enable bits (those belong to the address space),
//! and would invalidate every index handed out. A failed open is not
//! remembered: the next registration tries again.

use std::os::fd::{IntoRawFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

use crate::status;
use crate::Error;

static DATA_FD: AtomicI32 = AtomicI32::new(-1);
static OPEN_LOCK: Mutex<()> = Mutex::new(());

/// The descriptor, opening it if no earlier call succeeded.
pub(crate) fn data_fd() -> Result<RawFd, Error> {
    // ATOMICS: Acquire pairs with the Release store in `open_slow`, so a
    // thread that sees the fd also sees it fully opened.
    let fd = DATA_FD.load(Ordering::Acquire);
    if fd >= 0 {
        return Ok(fd);
    }
    open_slow()
}

/// The descriptor if it is already open; never opens it.
pub(crate) fn data_fd_if_open() -> Option<RawFd> {
    let fd = DATA_FD.load(Ordering::Acquire);
    (fd >= 0).then_some(fd)
}

#[cold]
#[inline(never)]
fn open_slow() -> Result<RawFd, Error> {
    let _guard = OPEN_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let fd = DATA_FD.load(Ordering::Acquire);
    if fd >= 0 {
        return Ok(fd);
    }
    match status::probe() {
        Ok((owned, _status)) => {
            let fd = owned.into_raw_fd();
            DATA_FD.store(fd, Ordering::Release);
            Ok(fd)
        }
        Err(status) => Err(Error::Unavailable(Box::new(status))),
    }
}

//! The only place the producer makes system calls.
//!
//! Each wrapper is a thin, typed shell over one libc call and returns the raw
//! errno on failure, so callers can map it to an error that says what to do.
//!
//! # Safety
//! Each wrapper passes the kernel pointers to live, initialised values of
//! the size it is given, and takes ownership only of the descriptors the
//! kernel just returned.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

pub use crate::errno::Errno;
use crate::abi::{UserReg, UserUnreg, DIAG_IOCSDEL, DIAG_IOCSREG, DIAG_IOCSUNREG};

/// `open(path, O_RDWR | O_CLOEXEC)`.
pub fn open_read_write(path: &CStr) -> Result<OwnedFd, Errno> {
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: open(2) returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `ioctl(fd, DIAG_IOCSREG, reg)`: registers an event; on success the kernel
/// has filled in `reg.write_index`.
///
/// References: Documentation/trace/user_events.rst, "Registering".
pub fn register(fd: RawFd, reg: &mut UserReg) -> Result<(), Errno> {
    // SAFETY: `reg` is a valid, writable `struct user_reg` with `size` set;
    // the kernel reads `name_args` and writes `write_index` only.
    let rc = unsafe { libc::ioctl(fd, DIAG_IOCSREG as _, reg as *mut UserReg) };
    if rc < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `ioctl(fd, DIAG_IOCSUNREG, unreg)`: the kernel clears the bit and never
/// writes to that address again.
pub fn unregister(fd: RawFd, unreg: &UserUnreg) -> Result<(), Errno> {
    // SAFETY: `unreg` is a valid `struct user_unreg` that the kernel only reads.
    let rc = unsafe { libc::ioctl(fd, DIAG_IOCSUNREG as _, unreg as *const UserUnreg) };
    if rc < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `ioctl(fd, DIAG_IOCSDEL, name)`: deletes an event nobody has registered.
pub fn delete(fd: RawFd, name: &CStr) -> Result<(), Errno> {
    // SAFETY: `name` is NUL-terminated and only read by the kernel.
    let rc = unsafe { libc::ioctl(fd, DIAG_IOCSDEL as _, name.as_ptr()) };
    if rc < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `writev(fd, iov, iovcnt)`.
pub fn writev(fd: RawFd, iov: &[libc::iovec]) -> Result<usize, Errno> {
    // SAFETY: every iovec points into memory borrowed by the caller for the
    // duration of this call, and `iov.len()` is the count of valid entries.
    let n = unsafe { libc::writev(fd, iov.as_ptr(), iov.len() as libc::c_int) };
    if n < 0 {
        return Err(Errno::last());
    }
    Ok(n as usize)
}

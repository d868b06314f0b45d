//! The system calls on Linux, where user_events live.
//!
//! # Safety
//! Each wrapper passes the kernel pointers to live, initialised values of
//! the size it is given, and takes ownership only of the descriptors the
//! kernel just returned. The one read of the auxiliary vector reads 4 of
//! the 16 bytes `AT_RANDOM` points at, which live as long as the process.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{Errno, RawFd};
use crate::abi::{UserReg, UserUnreg, DIAG_IOCSDEL, DIAG_IOCSREG, DIAG_IOCSUNREG};

/// This OS has user_events (if its kernel was built with them).
pub const OS_HAS_USER_EVENTS: bool = true;

/// An open descriptor, closed when dropped.
pub use std::os::fd::OwnedFd;

/// `struct iovec`: one piece of a `writev`.
pub use libc::iovec as Iovec;

/// The number of an open descriptor, which stays open while borrowed.
#[inline]
pub fn as_raw_fd(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
}

/// The path as the kernel takes it (its bytes, NUL-terminated); `None` if
/// it holds a NUL.
pub fn path_to_cstring(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

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
pub fn writev(fd: RawFd, iov: &[Iovec]) -> Result<usize, Errno> {
    // SAFETY: every iovec points into memory borrowed by the caller for the
    // duration of this call, and `iov.len()` is the count of valid entries.
    let n = unsafe { libc::writev(fd, iov.as_ptr(), iov.len() as libc::c_int) };
    if n < 0 {
        return Err(Errno::last());
    }
    Ok(n as usize)
}

/// `send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT)`: a peer that has gone
/// is `EPIPE`, not SIGPIPE, and a full socket `EAGAIN`, not a wait.
pub fn send_nonblocking(fd: RawFd, buf: &[u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel reads `buf.len()` bytes from a valid slice.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(Errno::last());
    }
    Ok(n as usize)
}

/// `getauxval(AT_RANDOM)`: the first 4 of the 16 random bytes the kernel
/// gives every exec; `None` without that entry (never since Linux 2.6.29).
///
/// References: getauxval(3).
pub fn exec_random() -> Option<u32> {
    // SAFETY: getauxval only reads the auxiliary vector the kernel set up.
    let random = unsafe { libc::getauxval(libc::AT_RANDOM) } as *const [u8; 4];
    if random.is_null() {
        return None;
    }
    // SAFETY: AT_RANDOM points at 16 bytes that live as long as the
    // process; four of them are read.
    Some(u32::from_ne_bytes(unsafe { random.read_unaligned() }))
}

/// `prctl(PR_SET_NAME, name)`: the calling thread's name as the kernel
/// keeps it (`comm`, at most 15 bytes; longer is cut by the kernel).
///
/// References: prctl(2), PR_SET_NAME.
pub fn set_thread_name(name: &CStr) -> Result<(), Errno> {
    // SAFETY: `name` is NUL-terminated and only read by the kernel, which
    // copies at most 16 bytes of it.
    let rc = unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0) };
    if rc < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

//! The system calls where there are no user_events: every OS but Linux.
//!
//! Nothing here reaches the OS. [`OS_HAS_USER_EVENTS`] is false, so
//! [`status()`](crate::status()) answers "Linux only" without looking for
//! tracefs, and every registration fails with that answer before it gets
//! here; should a call come anyway, it fails with `ENOSYS`. No descriptor
//! can be opened, so [`OwnedFd`] has no values at all.

use std::ffi::{c_void, CStr, CString};
use std::path::Path;

use super::{Errno, RawFd};
use crate::abi::{UserReg, UserUnreg};

/// This OS has no user_events: they exist only in the Linux kernel.
pub const OS_HAS_USER_EVENTS: bool = false;

/// What every call answers: the function is not implemented here.
const UNSUPPORTED: Errno = Errno(libc::ENOSYS);

/// An open descriptor; there are none where nothing can be opened.
#[derive(Debug)]
pub enum OwnedFd {}

/// `struct iovec` as Unix declares it, so that callers build their pieces
/// the same way on every OS.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Iovec {
    /// Start of the piece.
    pub iov_base: *mut c_void,
    /// Its length in bytes.
    pub iov_len: usize,
}

/// The number of an open descriptor (of which there are none).
#[inline]
pub fn as_raw_fd(fd: &OwnedFd) -> RawFd {
    match *fd {}
}

/// The path as a C string; `None` if it is not Unicode or holds a NUL.
pub fn path_to_cstring(path: &Path) -> Option<CString> {
    CString::new(path.to_str()?).ok()
}

/// Would open `path` read-write: `ENOSYS`.
pub fn open_read_write(_path: &CStr) -> Result<OwnedFd, Errno> {
    Err(UNSUPPORTED)
}

/// Would register an event: `ENOSYS`.
pub fn register(_fd: RawFd, _reg: &mut UserReg) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would unregister an enable word: `ENOSYS`.
pub fn unregister(_fd: RawFd, _unreg: &UserUnreg) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would delete an event: `ENOSYS`.
pub fn delete(_fd: RawFd, _name: &CStr) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would write an event: `ENOSYS`.
pub fn writev(_fd: RawFd, _iov: &[Iovec]) -> Result<usize, Errno> {
    Err(UNSUPPORTED)
}

/// Would tell a recorder an event's name: `ENOSYS`.
pub fn send_nonblocking(_fd: RawFd, _buf: &[u8]) -> Result<usize, Errno> {
    Err(UNSUPPORTED)
}

/// The kernel's per-exec random bytes: there is no `AT_RANDOM` here.
pub fn exec_random() -> Option<u32> {
    None
}

/// Would name the calling thread: `ENOSYS`.
pub fn set_thread_name(_name: &CStr) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

//! The system calls where there are no user_events: every OS but Linux.
//!
//! Nothing here reaches the OS. [`OS_HAS_USER_EVENTS`] is false, so
//! [`status()`](crate::status()) answers "Linux only" without looking for
//! tracefs, and every registration fails with that answer before it gets
//! here; should a call come anyway, it fails with `ENOSYS`. No descriptor
//! can be opened, so [`OwnedFd`] has no values at all.
//!
//! # Safety
//! Two functions are `unsafe fn` only to keep Linux's signatures; they do
//! nothing, so their contracts hold trivially.
#![allow(unsafe_code)]

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

/// Would read the kernel's random source: `ENOSYS` (callers fall back
/// to std's per-process random keys).
pub fn random_bytes(_buf: &mut [u8]) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would name the calling thread: `ENOSYS`.
pub fn set_thread_name(_name: &CStr) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would create a new private file: `ENOSYS`.
pub fn create_private_file(_path: &CStr) -> Result<OwnedFd, Errno> {
    Err(UNSUPPORTED)
}

/// Would open `path` read-only: `ENOSYS`.
pub fn open_read_only(_path: &CStr) -> Result<OwnedFd, Errno> {
    Err(UNSUPPORTED)
}

/// Would read: `ENOSYS`.
pub fn read(_fd: RawFd, _buf: &mut [u8]) -> Result<usize, Errno> {
    Err(UNSUPPORTED)
}

/// Would remove a file: `ENOSYS`.
pub fn unlink(_path: &CStr) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would set a file's length: `ENOSYS`.
pub fn ftruncate(_fd: RawFd, _len: usize) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would map a file: `ENOSYS`.
pub fn mmap_shared(_fd: RawFd, _len: usize) -> Result<std::ptr::NonNull<u8>, Errno> {
    Err(UNSUPPORTED)
}

/// The time-stamp counter: none here.
pub fn tsc() -> u64 {
    0
}

/// Would send a datagram: `ENOSYS`.
pub fn send_datagram(_path: &CStr, _buf: &[u8]) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would allocate a file's blocks: `ENOSYS`.
pub fn fallocate(_fd: RawFd, _len: usize) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would fault a mapping's pages in: `ENOSYS`.
pub fn populate_write(_at: std::ptr::NonNull<u8>, _len: usize) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would unmap a mapping, of which there are none here: `ENOSYS`.
///
/// # Safety
/// As on Linux: `at` and `len` are a mapping no longer used.
pub unsafe fn munmap(_at: std::ptr::NonNull<u8>, _len: usize) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// The process id: the transport that needs it never runs here.
pub fn pid() -> u32 {
    std::process::id()
}

/// A thread id: the transport that needs it never runs here.
pub fn tid() -> u32 {
    0
}

/// The effective user id: the transport that needs it never runs here.
pub fn euid() -> u32 {
    0
}

/// Whether a process exists: unknown here, so no.
pub fn process_exists(_pid: u32) -> bool {
    false
}

/// A monotonic clock reading: unused here.
pub fn monotonic_ns() -> u64 {
    0
}

/// The current CPU: unused here.
pub fn current_cpu() -> u32 {
    0
}

/// Would register an exit handler: `ENOSYS`.
pub fn at_exit(_f: extern "C" fn()) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would register a fork handler: `ENOSYS`.
///
/// # Safety
/// As on Linux.
pub unsafe fn at_fork_in_child(_child: unsafe extern "C" fn()) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would make a private directory: `ENOSYS`.
pub fn make_private_directory(_path: &Path) -> Result<(), Errno> {
    Err(UNSUPPORTED)
}

/// Would `stat` a file: `ENOSYS`.
pub fn inode_of(_path: &CStr) -> Result<u64, Errno> {
    Err(UNSUPPORTED)
}

/// Would look at a directory: `ENOSYS`.
pub fn directory_owner_and_mode(_path: &Path) -> Result<(bool, u32, u32), Errno> {
    Err(UNSUPPORTED)
}

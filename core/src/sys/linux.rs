//! The system calls on Linux, where user_events live.
//!
//! # Safety
//! Each wrapper passes the kernel pointers to live, initialised values of
//! the size it is given, and takes ownership only of the descriptors the
//! kernel just returned.
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

/// `getrandom(buf, len, 0)` until `buf` is full: bytes from the kernel's
/// random source, which blocks only before it is first seeded at boot.
///
/// References: getrandom(2).
pub fn random_bytes(buf: &mut [u8]) -> Result<(), Errno> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: the kernel writes at most `rest.len()` bytes into the
        // writable slice it is given.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            match Errno::last() {
                Errno(libc::EINTR) => continue,
                errno => return Err(errno),
            }
        }
        filled += n as usize;
    }
    Ok(())
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

// The shared-memory transport's calls (`producer::shm`). Each is one libc
// call and allocates nothing, so that the fork child handler, which may run
// only async-signal-safe code, can use them too.

/// `open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)`:
/// a new file only, never one already there, never through a symlink.
///
/// References: open(2).
pub fn create_private_file(path: &CStr) -> Result<OwnedFd, Errno> {
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    let fd = unsafe { libc::open(path.as_ptr(), flags, 0o600 as libc::c_uint) };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: open(2) returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `open(path, O_RDONLY | O_CLOEXEC)`.
pub fn open_read_only(path: &CStr) -> Result<OwnedFd, Errno> {
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: open(2) returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `read(fd, buf, len)`.
pub fn read(fd: RawFd, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most `buf.len()` bytes into a valid slice.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(Errno::last());
    }
    Ok(n as usize)
}

/// `unlink(path)`.
pub fn unlink(path: &CStr) -> Result<(), Errno> {
    // SAFETY: `path` is NUL-terminated and only read by the kernel.
    if unsafe { libc::unlink(path.as_ptr()) } < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `ftruncate(fd, len)`: a new tmpfs file's length; untouched pages stay
/// unallocated.
pub fn ftruncate(fd: RawFd, len: usize) -> Result<(), Errno> {
    // SAFETY: plain integer arguments.
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)`: the file,
/// shared with every process that maps it.
///
/// References: mmap(2).
pub fn mmap_shared(fd: RawFd, len: usize) -> Result<std::ptr::NonNull<u8>, Errno> {
    // SAFETY: a new mapping at an address the kernel picks overlaps nothing
    // the program uses; the kernel checks `fd` and `len`.
    let at = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
    if at == libc::MAP_FAILED {
        return Err(Errno::last());
    }
    std::ptr::NonNull::new(at.cast()).ok_or(Errno(libc::EFAULT))
}

/// `socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)`, `sendto(fd, buf, len,
/// MSG_DONTWAIT | MSG_NOSIGNAL, path)`, `close(fd)`: one datagram to the
/// socket bound at `path`, never waiting (a full socket is `EAGAIN`) and
/// never raising SIGPIPE; no descriptor outlives the call.
///
/// References: unix(7), sendto(2).
pub fn send_datagram(path: &CStr, buf: &[u8]) -> Result<(), Errno> {
    // SAFETY: a zeroed sockaddr_un is valid: family 0 and an empty path.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    let bytes = path.to_bytes();
    // The last byte stays 0: the kernel reads a NUL-terminated path.
    if bytes.len() >= addr.sun_path.len() {
        return Err(Errno(libc::ENAMETOOLONG));
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (to, &from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = from as libc::c_char;
    }
    // SAFETY: plain integer arguments.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: socket(2) returned a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
    // SAFETY: the kernel reads `buf.len()` bytes of a valid slice and
    // `len` bytes of the sockaddr_un on this stack.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            (&raw const addr).cast(),
            len,
        )
    };
    if n < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `fallocate(fd, 0, 0, len)`: the file's blocks allocated now, so that
/// a later write into its mapping cannot find tmpfs full (SIGBUS), where
/// this says `ENOSPC`.
///
/// References: fallocate(2).
pub fn fallocate(fd: RawFd, len: usize) -> Result<(), Errno> {
    // SAFETY: plain integer arguments.
    if unsafe { libc::fallocate(fd, 0, 0, len as libc::off_t) } < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `madvise(at, len, MADV_POPULATE_WRITE)`: every page of the mapping
/// allocated and mapped writable now, as a write to each would (Linux
/// 5.14; `EINVAL` before it, which the caller answers by touching each
/// page itself).
///
/// References: madvise(2), MADV_POPULATE_WRITE.
pub fn populate_write(at: std::ptr::NonNull<u8>, len: usize) -> Result<(), Errno> {
    // SAFETY: MADV_POPULATE_WRITE changes no byte of the range: it only
    // faults its pages in, as writes would; the kernel checks the range.
    if unsafe { libc::madvise(at.as_ptr().cast(), len, libc::MADV_POPULATE_WRITE) } < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `munmap(at, len)`.
///
/// # Safety
/// `at` and `len` are a mapping made by [`mmap_shared`], and nothing reads
/// or writes it after this call.
pub unsafe fn munmap(at: std::ptr::NonNull<u8>, len: usize) -> Result<(), Errno> {
    // SAFETY: the caller gives a whole mapping of ours that is no longer used.
    if unsafe { libc::munmap(at.as_ptr().cast(), len) } < 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// `getpid()`.
pub fn pid() -> u32 {
    // SAFETY: getpid(2) has no arguments and cannot fail.
    unsafe { libc::getpid() as u32 }
}

/// `gettid()`: the calling thread's id, as the kernel and perf name it.
pub fn tid() -> u32 {
    // SAFETY: gettid(2) has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// `geteuid()`.
pub fn euid() -> u32 {
    // SAFETY: geteuid(2) has no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// `kill(pid, 0)`: whether process `pid` exists. Only `ESRCH` says no: a
/// process of another user answers `EPERM`, and exists.
///
/// References: kill(2), "If sig is 0, then no signal is sent, but existence
/// and permission checks are still performed".
pub fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; only the checks run.
    unsafe { libc::kill(pid, 0) == 0 || Errno::last().0 != libc::ESRCH }
}

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds: perf's default clock
/// for user_events records is the same one.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// `rdtsc`: the CPU's time-stamp counter (x86-64); elsewhere 0, where the
/// shared-memory transport never takes it.
#[inline]
pub fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC reads a counter; it has no preconditions and
        // touches no memory. (A safe function in newer Rust.)
        #[allow(unused_unsafe)]
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// `sched_getcpu()`: the CPU this thread runs on (0 if it cannot say).
pub fn current_cpu() -> u32 {
    // SAFETY: no arguments; it reads the vDSO or makes getcpu(2).
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).unwrap_or(0)
}

/// `atexit(f)`.
pub fn at_exit(f: extern "C" fn()) -> Result<(), Errno> {
    // SAFETY: `f` is a plain function that lives as long as the program.
    if unsafe { libc::atexit(f) } != 0 {
        return Err(Errno(libc::ENOMEM));
    }
    Ok(())
}

/// `pthread_atfork(NULL, NULL, child)`: `child` runs in every child of
/// `fork()` before `fork()` returns there.
///
/// # Safety
/// `child` may run only async-signal-safe code: another thread of the
/// parent may have held any lock at the fork.
pub unsafe fn at_fork_in_child(child: unsafe extern "C" fn()) -> Result<(), Errno> {
    // SAFETY: the caller vouches for what `child` does; the other handlers
    // are none.
    match unsafe { libc::pthread_atfork(None, None, Some(child)) } {
        0 => Ok(()),
        errno => Err(Errno(errno)),
    }
}

/// `pthread_atfork(prepare, parent, child)`: `prepare` runs in the
/// forking thread before `fork()`, `parent` and `child` in the parent and
/// the child before it returns there.
///
/// # Safety
/// `child` may run only async-signal-safe code: another thread of the
/// parent may have held any lock at the fork (but those `prepare` took).
pub unsafe fn at_fork(prepare: unsafe extern "C" fn(), parent: unsafe extern "C" fn(), child: unsafe extern "C" fn()) -> Result<(), Errno> {
    // SAFETY: the caller vouches for what the handlers do.
    match unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) } {
        0 => Ok(()),
        errno => Err(Errno(errno)),
    }
}

/// Starts `run` on a thread named `name` that no signal is delivered to:
/// born with every signal blocked (`pthread_sigmask(SIG_BLOCK, all)`
/// before `pthread_create`: a thread inherits its creator's mask); the
/// caller's mask is put back after.
///
/// References: pthread_sigmask(3), "A new thread inherits a copy of its
/// creator's signal mask".
pub fn spawn_without_signals(name: &str, run: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let mut before = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigfillset initializes the set it is given, and
    // pthread_sigmask(SIG_BLOCK, set, old) only reads `all` and writes the
    // calling thread's previous mask into `before`.
    let blocked = unsafe { libc::sigfillset(all.as_mut_ptr()) == 0 && libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), before.as_mut_ptr()) == 0 };
    if !blocked {
        return Err(std::io::Error::other("cannot block signals"));
    }
    let thread = std::thread::Builder::new().name(name.into()).spawn(run);
    // SAFETY: `before` was written by the successful call above; this sets
    // the calling thread's mask back to it.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, before.as_ptr(), std::ptr::null_mut()) };
    thread.map(drop)
}

/// `mkdir(path, 0700)`, then `chmod(path, 0700)` past the umask; an
/// existing entry is `EEXIST`.
pub fn make_private_directory(path: &Path) -> Result<(), Errno> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let errno = |e: std::io::Error| Errno(e.raw_os_error().unwrap_or(libc::EIO));
    std::fs::DirBuilder::new().mode(0o700).create(path).map_err(errno)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(errno)
}

/// `stat(path)`'s inode number, allocating nothing: for
/// `/proc/self/ns/pid`, which namespace this process is in.
pub fn inode_of(path: &CStr) -> Result<u64, Errno> {
    // SAFETY: an all-zero `struct stat` is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated; `st` is a valid, writable stat.
    if unsafe { libc::stat(path.as_ptr(), &mut st) } == 0 {
        Ok(st.st_ino)
    } else {
        Err(Errno::last())
    }
}

/// `lstat(path)`: whether it is a directory (a symlink is not), its owner
/// and its mode bits.
pub fn directory_owner_and_mode(path: &Path) -> Result<(bool, u32, u32), Errno> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
    Ok((meta.file_type().is_dir(), meta.uid(), meta.mode() & 0o7777))
}

//! The producer's socket: `PID.INSTANCE.handoff` in its own shared-memory
//! directory, one thread in `accept`, the descriptor received and checked.
//!
//! A connection may come from anyone who can reach the directory (this
//! user, or root): so a message is taken only if it is exactly
//! [`HANDOFF_MESSAGE`] with one descriptor, and the descriptor only if it
//! is `user_events_data` opened for reading and writing. Anything else is
//! refused, named in `transport()`, and the thread listens on. A peer that
//! connects and sends nothing costs one receive's timeout.
//!
//! Once the pending tracepoints are registered (by the registrar, as every
//! registration is: see `producer::registrar`) the thread ends.
//!
//! # Safety
//! The thread is started with every signal blocked (`pthread_sigmask`,
//! restored in the caller at once), so a signal meant for the program is
//! never delivered to it; and it borrows the listening socket by number
//! from the process's state, which drops it only after the thread ends
//! (or in a fork child, which has no such thread).
#![allow(unsafe_code)]

use std::io::IoSliceMut;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SocketAddrUnix, SocketFlags, SocketType,
};

use super::{Listening, Refusal};
use crate::shm_layout::{self, HANDOFF_MESSAGE, TRACEFS_MAGIC};
use crate::sys;
use crate::Error;

/// How long a connection may take to say what it brings.
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(1);

/// Makes the socket, in this process's directory, and starts the thread
/// that accepts on it.
pub(super) fn listen() -> Result<Listening, Error> {
    let uid = sys::euid();
    crate::producer::shm::prepare_directory(uid)?;
    let (pid, instance) = (sys::pid(), sys::monotonic_ns() as u32);
    let path = shm_layout::directory(uid).join(shm_layout::handoff_socket_file_name(pid, instance));
    let failed = |op, e: std::io::Error| Error::SharedMemory { op, path: path.display().to_string(), errno: sys::Errno(e.raw_os_error().unwrap_or(0)) };
    let fd = bind_listener(&path).map_err(|e| failed("listen for user_events_data at", e))?;
    remove_at_exit();
    let number = fd.as_raw_fd();
    let thread_path = path.clone();
    if let Err(e) = sys::spawn_without_signals("usertrace-handoff", move || accept_until_installed(number, &thread_path)) {
        let _ = std::fs::remove_file(&path);
        return Err(failed("start the thread that listens at", e));
    }
    Ok(Listening { path, owner: pid, fd: Some(fd) })
}

/// A Unix stream socket bound at `path` and listening (`socket`, `bind`,
/// `listen`), close-on-exec. Its mode is the umask's; the directory
/// (0700) is what keeps others out.
pub fn bind_listener(path: &Path) -> std::io::Result<OwnedFd> {
    let fd = rustix::net::socket_with(AddressFamily::UNIX, SocketType::STREAM, SocketFlags::CLOEXEC, None)?;
    rustix::net::bind(&fd, &SocketAddrUnix::new(path)?)?;
    rustix::net::listen(&fd, 4)?;
    Ok(fd)
}

/// Accepts until a descriptor is installed, then removes the socket.
fn accept_until_installed(number: i32, path: &Path) {
    // SAFETY: the process's state owns this descriptor and drops it only
    // in `stopped_listening`, called below once this loop is over (a fork
    // child drops its own copy, where this thread does not exist).
    let listener = unsafe { BorrowedFd::borrow_raw(number) };
    loop {
        let connection = match rustix::net::accept_with(listener, SocketFlags::CLOEXEC) {
            Ok(connection) => connection,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::CONNABORTED) => continue,
            // Out of descriptors, say: try again later rather than spin.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        let result = receive_descriptor(connection.as_fd()).and_then(|fd| {
            check_descriptor(fd.as_fd())?;
            super::install(fd).map_err(Refusal)
        });
        match result {
            Ok(()) => break,
            Err(Refusal(why)) => super::refused(why),
        }
    }
    let _ = std::fs::remove_file(path);
    super::stopped_listening();
    // The thread ends here: the registrations it asked for were made by
    // the registrar (`producer::registrar`), whose thread holds them for
    // the process's life, so nothing is lost with this one.
}

/// Receives one message on `connection`: exactly [`HANDOFF_MESSAGE`]
/// with exactly one descriptor (close-on-exec). Any other descriptor is
/// closed.
pub fn receive_descriptor(connection: BorrowedFd<'_>) -> Result<OwnedFd, Refusal> {
    let refuse = |why: String| Refusal(why);
    rustix::net::sockopt::set_socket_timeout(connection, rustix::net::sockopt::Timeout::Recv, Some(RECEIVE_TIMEOUT))
        .map_err(|e| refuse(format!("cannot set a timeout: {e}")))?;
    let mut bytes = [0u8; HANDOFF_MESSAGE.len() + 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let msg = rustix::net::recvmsg(connection, &mut [IoSliceMut::new(&mut bytes)], &mut control, RecvFlags::CMSG_CLOEXEC)
        .map_err(|e| refuse(format!("receiving failed: {e}")))?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    if msg.flags.contains(ReturnFlags::CTRUNC) || fds.len() > 1 {
        return Err(refuse("more than one descriptor was sent".into()));
    }
    if &bytes[..msg.bytes] != HANDOFF_MESSAGE {
        return Err(refuse(format!("a message that is not a handoff ({} bytes)", msg.bytes)));
    }
    fds.pop().ok_or_else(|| refuse("the message carried no descriptor".into()))
}

/// Whether `fd` is what a recorder says it is: a file of tracefs
/// (`fstatfs`), open for reading and writing (`fcntl(F_GETFL)`), whose
/// name is `user_events_data` (`/proc/self/fd`).
pub fn check_descriptor(fd: BorrowedFd<'_>) -> Result<(), Refusal> {
    let statfs = rustix::fs::fstatfs(fd).map_err(|e| Refusal(format!("fstatfs failed: {e}")))?;
    // `f_type` is an i64 on x86-64, narrower on some other architectures.
    #[allow(clippy::useless_conversion)]
    let f_type = i64::from(statfs.f_type);
    if f_type != TRACEFS_MAGIC {
        return Err(Refusal(format!("the descriptor is not on tracefs (f_type {:#x})", statfs.f_type)));
    }
    let mode = rustix::fs::fcntl_getfl(fd).map_err(|e| Refusal(format!("fcntl failed: {e}")))?;
    if mode & rustix::fs::OFlags::RWMODE != rustix::fs::OFlags::RDWR {
        return Err(Refusal("the descriptor is not open for reading and writing".into()));
    }
    let name = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default();
    if name.file_name().is_none_or(|n| n != "user_events_data") {
        return Err(Refusal(format!("the descriptor is {}, not user_events_data", name.display())));
    }
    Ok(())
}

/// The exit handler that removes the socket, once per process.
fn remove_at_exit() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let _ = sys::at_exit(at_exit);
    });
}

extern "C" fn at_exit() {
    // Nothing here may unwind into libc.
    let _ = std::panic::catch_unwind(super::remove_socket_at_exit);
}

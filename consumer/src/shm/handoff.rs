//! Handing the node's `user_events_data` to producers in containers that
//! have none (the layout's "Handing over `user_events_data`").
//!
//! A producer set to user_events with no tracefs listens on
//! `PID.INSTANCE.handoff` in its /dev/shm directory. At each walk of
//! /proc (`containers.rs`, on the walker's thread, never the drain's),
//! every selected container's directories are listed and each such socket
//! is served once:
//!
//! 1. it is opened `O_PATH | O_NOFOLLOW` beneath its directory
//!    (`openat2`: `RESOLVE_BENEATH | NO_SYMLINKS | NO_MAGICLINKS |
//!    NO_XDEV`) and must be a socket: a symlink planted under its name is
//!    opened as the link itself and refused, never followed; a mount is
//!    refused (`EXDEV`);
//! 2. a non-blocking socket connects to it through `/proc/self/fd/N`,
//!    the inode just opened, not a path the container could change: a
//!    Unix connect needs no `accept`, so it returns at once, and a full
//!    backlog is `EAGAIN`, asked again at the next walk;
//! 3. `SO_PEERCRED` gives the pid (ours, the host's) of the process that
//!    listens: it must be one that shares that /dev/shm and is the name's
//!    pid in its own PID namespace (`NSpid`), and be selected;
//! 4. one message, [`HANDOFF_MESSAGE`] with a descriptor of a fresh
//!    `open(user_events_data, O_RDWR | O_CLOEXEC)` (`SCM_RIGHTS`), is sent
//!    without waiting (`MSG_DONTWAIT | MSG_NOSIGNAL`).
//!
//! A socket is remembered by its `(dev, ino)`: served or refused once,
//! never again while it exists. A producer removes its socket once it
//! holds a descriptor, so it is not given another.

use std::collections::HashSet;
use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use rustix::fs::{openat2, FileType, Mode, OFlags};

use super::place::beneath;
use rustix::net::{AddressFamily, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketAddrUnix, SocketFlags, SocketType};
use usertrace::shm_layout::{parse_handoff_socket_file_name, HANDOFF_MESSAGE, HANDOFF_SUFFIX};

use crate::containers::{own_pid, selected, ContainerIdentity, ContainerSelector};

/// Why a socket was not served. (The errors are read through `Debug`.)
#[derive(Debug)]
#[allow(dead_code)]
pub(crate) enum Refused {
    /// Not a socket of the directory's own (a symlink, a mount, another
    /// kind of file): never followed, never served.
    NotASocket(std::io::Error),
    /// Nobody listens (a producer that crashed), or the connection failed.
    Unreachable(std::io::Error),
    /// Its backlog is full: asked again at the next walk.
    Busy,
    /// The process listening is not one the name may name (or not selected).
    WrongPeer { pid: u32 },
    /// The message could not be sent.
    Send(std::io::Error),
}

impl Refused {
    /// Whether to ask again at the next walk rather than never.
    fn is_transient(&self) -> bool {
        matches!(self, Refused::Busy)
    }
}

/// Hands over a descriptor of `data` to the sockets it finds, each once.
pub(crate) struct Giver {
    /// The node's `user_events_data`.
    data: PathBuf,
    /// Sockets served or refused, by `(dev, ino)`.
    done: HashSet<(u64, u64)>,
    /// Sockets seen in this walk: `done` keeps only these at its end.
    seen: HashSet<(u64, u64)>,
    /// Producers given a descriptor, by host pid: for tests and messages.
    pub(crate) given: Vec<u32>,
}

impl Giver {
    pub(crate) fn new(data: PathBuf) -> Giver {
        Giver { data, done: HashSet::new(), seen: HashSet::new(), given: Vec::new() }
    }

    /// Forgets the sockets no longer there (a new one may reuse an inode).
    pub(crate) fn end_walk(&mut self) {
        let seen = std::mem::take(&mut self.seen);
        self.done.retain(|key| seen.contains(key));
    }

    /// Serves every handoff socket in the `usertrace-*` directories of a
    /// container's /dev/shm `shm`, whose processes are `members` (host pids).
    pub(crate) fn serve_shm(&mut self, shm: &OwnedFd, directories: &[String], members: &[u32], selectors: &[ContainerSelector]) {
        for name in directories {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let Ok(dir) = openat2(shm, name.as_str(), flags, Mode::empty(), beneath()) else { continue };
            self.serve_directory(&dir, members, selectors);
        }
    }

    /// Serves the handoff sockets in `dir`.
    pub(crate) fn serve_directory(&mut self, dir: &OwnedFd, members: &[u32], selectors: &[ContainerSelector]) {
        let names = socket_names(dir);
        if names.is_empty() {
            return;
        }
        // Each member's pid inside its namespace, read once per directory.
        let inside: Vec<(u32, Option<u32>)> = members.iter().map(|&host| (host, own_pid(&format!("/proc/{host}/status")))).collect();
        for name in names {
            let Some((pid, _)) = parse_handoff_socket_file_name(&name) else { continue };
            let Ok(stat) = rustix::fs::statat(dir, name.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW) else { continue };
            let key = (stat.st_dev, stat.st_ino);
            self.seen.insert(key);
            // Its process may not be among the last walk's yet: next walk.
            let candidates: Vec<u32> = inside.iter().filter(|(_, own)| *own == Some(pid)).map(|(host, _)| *host).collect();
            if self.done.contains(&key) || candidates.is_empty() {
                continue;
            }
            let Ok(data) = open_data(&self.data) else { return };
            let may_have = |peer: u32| candidates.contains(&peer) && is_selected(peer, selectors);
            match hand_over(dir.as_fd(), &name, may_have, data.as_fd()) {
                Ok(peer) => {
                    self.given.push(peer);
                    self.done.insert(key);
                }
                Err(refused) if refused.is_transient() => {}
                Err(_) => {
                    self.done.insert(key);
                }
            }
        }
    }
}

fn is_selected(pid: u32, selectors: &[ContainerSelector]) -> bool {
    selectors.is_empty() || ContainerIdentity::read(pid).is_some_and(|who| selected(selectors, &who))
}

/// The handoff socket names in `dir`, bounded like any listing.
fn socket_names(dir: &OwnedFd) -> Vec<String> {
    let Ok(listing) = rustix::fs::Dir::read_from(dir) else { return Vec::new() };
    listing
        .flatten()
        .take(super::place::MAX_NAMES)
        .filter_map(|e| e.file_name().to_str().ok().filter(|n| n.ends_with(HANDOFF_SUFFIX)).map(str::to_owned))
        .collect()
}

/// A fresh descriptor of the node's `user_events_data`: one open file
/// description per producer, as the write indexes belong to it.
fn open_data(data: &std::path::Path) -> std::io::Result<OwnedFd> {
    Ok(rustix::fs::open(data, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())?)
}

/// Hands `data` over to the process listening on socket `name` in `dir`,
/// if `may_have` accepts its pid (`SO_PEERCRED`, in our PID namespace);
/// returns that pid. Never waits: see the module doc.
pub(crate) fn hand_over(dir: BorrowedFd<'_>, name: &str, may_have: impl Fn(u32) -> bool, data: BorrowedFd<'_>) -> Result<u32, Refused> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let socket_file = openat2(dir, name, flags, Mode::empty(), beneath()).map_err(|e| Refused::NotASocket(e.into()))?;
    let stat = rustix::fs::fstat(&socket_file).map_err(|e| Refused::NotASocket(e.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Socket {
        return Err(Refused::NotASocket(std::io::Error::other("not a socket")));
    }
    let connection = connect_to(socket_file.as_fd())?;
    let peer = rustix::net::sockopt::socket_peercred(&connection).map_err(|e| Refused::Unreachable(e.into()))?;
    let pid = peer.pid.as_raw_nonzero().get() as u32;
    if !may_have(pid) {
        return Err(Refused::WrongPeer { pid });
    }
    send_descriptor(connection.as_fd(), data)?;
    Ok(pid)
}

/// Connects, without waiting, to the socket `file` (an `O_PATH`
/// descriptor) through its `/proc/self/fd` name.
fn connect_to(file: BorrowedFd<'_>) -> Result<OwnedFd, Refused> {
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    let socket = rustix::net::socket_with(AddressFamily::UNIX, SocketType::STREAM, flags, None).map_err(|e| Refused::Unreachable(e.into()))?;
    let address = SocketAddrUnix::new(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(|e| Refused::Unreachable(e.into()))?;
    match rustix::net::connect(&socket, &address) {
        Ok(()) => Ok(socket),
        Err(rustix::io::Errno::AGAIN) => Err(Refused::Busy),
        Err(e) => Err(Refused::Unreachable(e.into())),
    }
}

/// Sends [`HANDOFF_MESSAGE`] with `data` (`SCM_RIGHTS`), without waiting.
fn send_descriptor(connection: BorrowedFd<'_>, data: BorrowedFd<'_>) -> Result<(), Refused> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [data];
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(Refused::Send(std::io::Error::other("no room for the descriptor")));
    }
    let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
    match rustix::net::sendmsg(connection, &[IoSlice::new(HANDOFF_MESSAGE)], &mut control, flags) {
        Ok(n) if n == HANDOFF_MESSAGE.len() => Ok(()),
        Ok(n) => Err(Refused::Send(std::io::Error::other(format!("sent {n} bytes of {}", HANDOFF_MESSAGE.len())))),
        Err(e) => Err(Refused::Send(e.into())),
    }
}

#[cfg(test)]
mod tests;

//! The recorder's wake socket: producers whose ring passed its watermark
//! send it a byte, and the drain polls it beside the perf descriptors
//! (the protocol is `usertrace::shm_layout`'s "Waking the recorder").
//!
//! Bound in this user's own directory, and, run as root, linked into each
//! other user's directory where a producer it holds lives. Everything
//! that arrives is read and thrown away: a datagram says only "read the
//! rings", and a producer that sends without end is honoured at most once
//! per `MIN_WAKE_INTERVAL_MS` (the drain's side of that rule is in
//! `drain.rs`).

use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};

use usertrace::shm_layout::{directory, parse_wake_socket_file_name, wake_socket_file_name};

use crate::sys;

/// The most datagrams read at one wakeup: a producer that keeps sending
/// cannot hold the drain in the read.
const MAX_READ_PER_WAKEUP: usize = 1024;

/// A bound wake socket and the names it has.
pub(crate) struct WakeSocket {
    socket: UnixDatagram,
    /// Its name in our own directory, then its links, each with the inode
    /// they had when made (removed at the end only if still ours).
    names: Vec<(PathBuf, u64)>,
    inode: u64,
}

impl WakeSocket {
    /// Binds `RECORDER.wake` in this user's directory (made private if it
    /// is not there yet), after removing the dead sockets earlier
    /// recorders left there. None where that cannot be done safely: the
    /// recorder then reads at its poll interval, as without wakeups.
    pub(crate) fn bind(recorder: u32) -> Option<WakeSocket> {
        let euid = sys::effective_uid();
        let dir = directory(euid);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        // Not followed: ours, a directory, private, or not used.
        let meta = std::fs::symlink_metadata(&dir).ok()?;
        if !meta.is_dir() || meta.uid() != euid || meta.mode() & 0o077 != 0 {
            return None;
        }
        remove_dead_sockets(&dir);
        let path = dir.join(wake_socket_file_name(recorder));
        // One of our own pid's from before (a recorder that died, and its pid reused).
        let _ = std::fs::remove_file(&path);
        let socket = UnixDatagram::bind(&path).ok()?;
        socket.set_nonblocking(true).ok()?;
        // Root's socket is linked into other users' directories, whose
        // producers must be able to send to it: the mode is set here, in
        // our own private directory, never through a path they control.
        let mode = if euid == 0 { 0o666 } else { 0o600 };
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode));
        let inode = std::fs::symlink_metadata(&path).ok()?.ino();
        Some(WakeSocket { socket, names: vec![(path, inode)], inode })
    }

    /// Makes the socket reachable from `dir` (a producer's directory) too,
    /// unless it is already: a hard link, so nothing of it is set through
    /// `dir`, whose owner may be anyone. A name taken there already, or a
    /// link refused, leaves that directory to the poll interval.
    pub(crate) fn reach_from(&mut self, dir: &Path) {
        let Some(ours) = self.names.first().map(|(p, _)| p.clone()) else { return };
        let Some(name) = ours.file_name() else { return };
        let link = dir.join(name);
        if self.names.iter().any(|(p, _)| *p == link) || ours.parent() == Some(dir) {
            return;
        }
        remove_dead_sockets(dir);
        if std::fs::hard_link(&ours, &link).is_ok() {
            self.names.push((link, self.inode));
        }
    }

    /// The descriptor to poll.
    pub(crate) fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }

    /// Reads what is waiting, up to a bound; how many datagrams that was.
    pub(crate) fn take(&self) -> usize {
        let mut buf = [0u8; 16];
        (0..MAX_READ_PER_WAKEUP).take_while(|_| self.socket.recv(&mut buf).is_ok()).count()
    }
}

impl Drop for WakeSocket {
    fn drop(&mut self) {
        for (path, inode) in &self.names {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.ino() == *inode) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Removes the wake sockets in `dir` that nobody is bound to any more
/// (their recorder crashed): a datagram to one is refused. Decided by the
/// socket, not by a pid, which may name another process in another PID
/// namespace sharing this directory.
fn remove_dead_sockets(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let Ok(probe) = UnixDatagram::unbound() else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_str().and_then(parse_wake_socket_file_name).is_none() {
            continue;
        }
        let path = entry.path();
        if !entry.file_type().is_ok_and(|t| std::os::unix::fs::FileTypeExt::is_socket(&t)) {
            continue;
        }
        if probe.connect(&path).is_err_and(|e| e.raw_os_error() == Some(libc::ECONNREFUSED)) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_nobody_is_bound_to_is_removed_and_a_live_one_kept() {
        let dir = std::env::temp_dir().join(format!("usertrace-wake-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let live = UnixDatagram::bind(dir.join(wake_socket_file_name(1))).unwrap();
        drop(UnixDatagram::bind(dir.join(wake_socket_file_name(2))).unwrap());
        std::fs::write(dir.join("3.registry"), b"").unwrap();
        remove_dead_sockets(&dir);
        let mut left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(left, ["1.wake", "3.registry"]);
        drop(live);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_arrives_is_read_up_to_a_bound_and_the_names_go_at_the_end() {
        // A pid no process has: the name is ours alone.
        let recorder = u32::MAX - std::process::id();
        let mut wake = WakeSocket::bind(recorder).expect("our own directory");
        // On the same filesystem as our directory: a hard link cannot cross.
        let other = PathBuf::from(format!("/dev/shm/usertrace-wake-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&other);
        std::fs::create_dir(&other).unwrap();
        wake.reach_from(&other);
        wake.reach_from(&other);
        assert_eq!(wake.names.len(), 2, "one link per directory");
        let sender = UnixDatagram::unbound().unwrap();
        for (path, _) in &wake.names {
            for _ in 0..3 {
                sender.send_to(&[1], path).unwrap();
            }
        }
        assert_eq!(wake.take(), 6);
        assert_eq!(wake.take(), 0, "nothing waits once read");
        let names: Vec<PathBuf> = wake.names.iter().map(|(p, _)| p.clone()).collect();
        drop(wake);
        assert!(names.iter().all(|p| !p.exists()), "{names:?}");
        std::fs::remove_dir_all(&other).unwrap();
    }
}

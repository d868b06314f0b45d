//! The socket through which `usertrace dump` asks a running flight
//! recorder for a dump, and hears back the file it wrote.
//!
//! Each recorder listens on `recorder-PID.sock` in a directory of its
//! user's own: `$XDG_RUNTIME_DIR/usertrace`, else `/tmp/usertrace-UID`,
//! made 0700 and refused if anyone else owns it or may enter it. Only that
//! user and root can then reach the socket; the recorder checks the
//! peer's uid again, from the kernel (SO_PEERCRED), before it dumps.
//!
//! The protocol is one line each way: `dump`, then the dump's path once it
//! is written, or `error: WHY`.
//!
//! # Safety
//! One `getsockopt(SO_PEERCRED)` into a live `ucred` of the size passed.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The directory of this user's recorders' sockets.
pub fn directory() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Path::new(&dir).join("usertrace"),
        None => PathBuf::from(format!("/tmp/usertrace-{}", uid())),
    }
}

fn uid() -> u32 {
    // SAFETY: getuid(2) takes nothing and cannot fail.
    unsafe { libc::getuid() }
}

/// Makes (or checks) `dir`: ours, and no one else's to enter.
fn private_directory(dir: &Path) -> io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != uid() || meta.permissions().mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a directory of this user's that only they may enter (mode 0700): remove it or fix it", dir.display()),
        ));
    }
    Ok(())
}

/// A recorder's listening socket; removed when dropped.
pub struct ControlSocket {
    listener: UnixListener,
    path: PathBuf,
}

impl ControlSocket {
    pub fn bind() -> io::Result<ControlSocket> {
        let dir = directory();
        private_directory(&dir)?;
        let path = dir.join(format!("recorder-{}.sock", std::process::id()));
        // A socket left by a recorder of this pid that was killed.
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        listener.set_nonblocking(true)?;
        Ok(ControlSocket { listener, path })
    }

    /// The connections that asked for a dump since the last call, each
    /// with who asked (`uid 1000 pid 42`). A peer of another user (other
    /// than root) is told no.
    pub fn accept(&mut self) -> Vec<(String, UnixStream)> {
        let mut asked = Vec::new();
        while let Ok((stream, _)) = self.listener.accept() {
            let Ok((pid, peer_uid)) = peer(&stream) else { continue };
            if peer_uid != uid() && peer_uid != 0 {
                Waiting::answer(stream, "error: only the recorder's user or root may ask it for a dump");
                continue;
            }
            if stream.set_nonblocking(false).is_err() || stream.set_read_timeout(Some(Duration::from_secs(1))).is_err() {
                continue;
            }
            let mut line = String::new();
            if BufReader::new(&stream).read_line(&mut line).is_err() {
                continue;
            }
            if line.trim() == "dump" {
                asked.push((format!("uid {peer_uid} pid {pid}"), stream));
            } else {
                Waiting::answer(stream, "error: say `dump`");
            }
        }
        asked
    }
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The peer's pid and uid, as the kernel saw them at connect.
fn peer(stream: &UnixStream) -> io::Result<(i32, u32)> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt(2) writes at most `len` bytes into `cred`, a live
    // ucred of that size, on a socket we own.
    let rc = unsafe {
        libc::getsockopt(stream.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PEERCRED, (&mut cred as *mut libc::ucred).cast(), &mut len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((cred.pid, cred.uid))
}

/// The `usertrace dump` connections waiting for their dump, by token.
#[derive(Clone, Default)]
pub struct Waiting(Arc<Mutex<HashMap<u64, Vec<UnixStream>>>>);

impl Waiting {
    pub fn wait(&self, token: u64, stream: UnixStream) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).entry(token).or_default().push(stream);
    }

    /// Answers the connections waiting for `token`, if any.
    /// Answers every caller still waiting, whatever its dump, with
    /// `answer`: the recorder is ending.
    pub fn answer_all(&self, answer: &str) {
        let waiting = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        for stream in waiting.into_values().flatten() {
            Waiting::answer(stream, answer);
        }
    }

    pub fn answer_token(&self, token: u64, answer: &str) {
        let streams = self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&token);
        for stream in streams.into_iter().flatten() {
            Waiting::answer(stream, answer);
        }
    }

    /// One line back; a client that has gone is no matter.
    pub fn answer(mut stream: UnixStream, answer: &str) {
        let _ = writeln!(stream, "{answer}");
    }
}

/// The recorders this user may reach: (pid, socket), by pid. Root also
/// sees every user's.
pub fn recorders() -> Vec<(u32, PathBuf)> {
    let mut dirs = vec![directory()];
    if uid() == 0 {
        for pattern_dir in ["/tmp", "/run/user"] {
            let Ok(entries) = std::fs::read_dir(pattern_dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with("usertrace-") {
                    dirs.push(entry.path());
                } else if pattern_dir == "/run/user" {
                    dirs.push(entry.path().join("usertrace"));
                }
            }
        }
    }
    let mut found: Vec<(u32, PathBuf)> = dirs
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.flatten())
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let pid = name.strip_prefix("recorder-")?.strip_suffix(".sock")?.parse().ok()?;
            // One whose recorder was killed is not listed.
            Path::new(&format!("/proc/{pid}")).exists().then(|| (pid, entry.path()))
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_others_may_enter_is_refused() {
        let dir = std::env::temp_dir().join(format!("usertrace-socket-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        private_directory(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = private_directory(&dir).unwrap_err();
        assert!(e.to_string().contains("only they may enter (mode 0700)"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

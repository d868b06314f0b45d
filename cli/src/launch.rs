//! Starting `-- CMD` held at the door: the child is forked at once but
//! execs only when released, after the session is attached, so none of its
//! events (nor its exec) happens before recording starts. Its usertrace
//! producers then announce each event they register, and wait for the
//! recorder to attach (`usertrace::ATTACH_FD_ENV`).
//!
//! # Safety
//! The held child's `pre_exec` closure runs between fork and exec, so it
//! makes only async-signal-safe calls (close, fcntl, read) on descriptors
//! it owns; `pipe2` writes into an array with room for both descriptors,
//! which are then owned here.
#![allow(unsafe_code)]

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::thread::JoinHandle;

/// A forked child waiting to exec.
pub struct HeldChild {
    gate: Option<std::fs::File>,
    spawner: Option<JoinHandle<std::io::Result<Child>>>,
}

impl HeldChild {
    /// Forks `argv`, held. `attach` is the handshake socket the command
    /// inherits (see `usertrace::ATTACH_FD_ENV`) and the variables naming it.
    pub fn spawn(argv: &[String], attach: Option<(RawFd, [(&str, String); 2])>) -> std::io::Result<HeldChild> {
        let (read_end, write_end) = pipe()?;
        let write_fd = write_end.as_raw_fd();
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]);
        let inherit_fd = attach.as_ref().map_or(-1, |(fd, _)| *fd);
        if let Some((_, env)) = &attach {
            command.envs(env.iter().map(|(k, v)| (k, v)));
        }
        let read_end = std::fs::File::from(read_end);
        let read_fd = read_end.as_raw_fd();
        // SAFETY: the closure runs in the forked child before exec and only
        // makes async-signal-safe calls (close, read) on descriptors it owns.
        unsafe {
            command.pre_exec(move || {
                libc::close(write_fd);
                // Only the command's copy of the handshake socket survives exec.
                if inherit_fd >= 0 && libc::fcntl(inherit_fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let mut byte = 0u8;
                loop {
                    let n = libc::read(read_fd, (&mut byte as *mut u8).cast(), 1);
                    if n == 1 {
                        libc::close(read_fd);
                        return Ok(());
                    }
                    if n == 0 {
                        // The recorder gave up: do not run the command.
                        return Err(std::io::Error::from_raw_os_error(libc::ECANCELED));
                    }
                    if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            });
        }
        // Command::spawn returns only once the child has exec'd, which it
        // does only after release(): so it runs on its own thread.
        let spawner = std::thread::spawn(move || {
            let child = command.spawn();
            drop(read_end);
            child
        });
        Ok(HeldChild { gate: Some(std::fs::File::from(write_end)), spawner: Some(spawner) })
    }

    /// Lets the child exec, and returns it once it has.
    pub fn release(mut self) -> std::io::Result<Child> {
        if let Some(mut gate) = self.gate.take() {
            gate.write_all(&[1])?;
        }
        self.join()
    }

    fn join(&mut self) -> std::io::Result<Child> {
        match self.spawner.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(std::io::Error::other("the command's launcher thread failed")),
        }
    }
}

impl Drop for HeldChild {
    /// Not released: closing the gate makes the child exit without exec.
    fn drop(&mut self) {
        self.gate.take();
        if self.spawner.is_some() {
            let _ = self.join();
        }
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    use std::os::fd::FromRawFd;
    // SAFETY: pipe2 returned two new descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}


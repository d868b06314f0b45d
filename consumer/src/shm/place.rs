//! A `usertrace-UID` directory producers write in, held open: in the
//! host's /dev/shm, or in a container's, reached through the root of one
//! of its processes (`/proc/PID/root`).
//!
//! A container's files are its processes' to make, and its processes may
//! be hostile: a name there can be a symlink to `/etc/shadow`, a FIFO, or
//! a directory. So nothing in it is ever opened by path. The directory is
//! opened with `openat2(RESOLVE_IN_ROOT)` from a descriptor of the
//! container's root, where `..` and absolute symlinks stop at that root;
//! each file in it with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
//! from the directory's descriptor, so that a symlink is refused
//! (ELOOP), never followed. The host's directories are held the same
//! way: a root recorder reads other users' directories, which are theirs
//! to fill. References: openat2(2).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{openat2, AtFlags, Mode, OFlags, ResolveFlags};

/// The most names read from one directory at one scan: a container that
/// makes a million files costs us one bounded listing, not a million
/// opens. Far beyond what a process's threads make (one ring each).
pub(crate) const MAX_NAMES: usize = 16384;

/// A producers' directory, open.
pub(crate) struct Place {
    fd: OwnedFd,
    /// How messages name it: `/dev/shm/usertrace-1000`, or for a container
    /// `/proc/4711/root/dev/shm/usertrace-1000` (the pid it was first
    /// reached through; the descriptor outlives that process).
    pub(crate) shown: PathBuf,
    /// Whether it is a container's: its producers' pids are that
    /// container's, to translate (`translate.rs`).
    pub(crate) in_container: bool,
}

/// Flags for everything opened inside a producers' directory: beneath it,
/// no symlink of any kind, no other file system mounted over a name.
pub(crate) fn beneath() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_XDEV
}

impl Place {
    /// Opens `dir` (an absolute path in our own mount namespace) as a
    /// place: not followed if it is a symlink.
    pub(crate) fn open_host(dir: &Path) -> std::io::Result<Place> {
        let fd = rustix::fs::open(dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
        Ok(Place { fd, shown: dir.to_owned(), in_container: false })
    }

    /// Opens `name` (a `usertrace-UID`) inside the directory `shm`, a
    /// container's /dev/shm opened in its root; `shown` names `shm`.
    pub(crate) fn open_in(shm: &OwnedFd, shown: &Path, name: &str) -> std::io::Result<Place> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat2(shm, name, flags, Mode::empty(), beneath())?;
        Ok(Place { fd, shown: shown.join(name), in_container: true })
    }

    /// The names in the directory, at most [`MAX_NAMES`] of them.
    pub(crate) fn names(&self) -> Vec<String> {
        let Ok(dir) = rustix::fs::Dir::read_from(&self.fd) else { return Vec::new() };
        dir.flatten()
            .take(MAX_NAMES)
            .filter_map(|entry| entry.file_name().to_str().ok().filter(|n| *n != "." && *n != "..").map(str::to_owned))
            .collect()
    }

    /// Opens file `name` here for reading and writing: refused if it is a
    /// symlink (ELOOP), and without waiting if it is a FIFO. The caller
    /// checks that it is a regular file of the size it expects.
    pub(crate) fn open_file(&self, name: &str) -> std::io::Result<File> {
        let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = openat2(&self.fd, name, flags, Mode::empty(), beneath())?;
        Ok(File::from(fd))
    }

    /// The inode `name` has now, not followed; None if it is gone.
    pub(crate) fn inode_of(&self, name: &str) -> Option<u64> {
        rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).ok().map(|s| s.st_ino)
    }

    /// Removes `name` if it is still inode `inode`: the file we mapped,
    /// not one a producer put in its place since.
    pub(crate) fn remove_if(&self, name: &str, inode: u64) {
        if self.inode_of(name) == Some(inode) {
            let _ = rustix::fs::unlinkat(&self.fd, name, AtFlags::empty());
        }
    }

    /// The path messages show for `name`.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.shown.join(name)
    }
}

/// Why a file was refused, for a person: what it is and that it is not
/// followed, from the error `open_file` gave.
pub(crate) fn refusal(error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ELOOP) => "it is a symbolic link, which the recorder never follows (a producer makes regular files)".into(),
        Some(libc::EXDEV) => "it is another file system mounted over a producer's name".into(),
        // A producer's files are its user's alone (0600), as they should
        // be; what is missing is the recorder's right to write them.
        Some(libc::EACCES | libc::EPERM) => "the recorder may not open it for writing, which it needs to take the producer's \
             rings (a producer's files are its user's alone, mode 0600): run the recorder as root with CAP_DAC_OVERRIDE \
             (and CAP_SYS_PTRACE for another user's or container's processes), or as the producer's user"
            .into(),
        _ => format!("cannot open it: {error}"),
    }
}

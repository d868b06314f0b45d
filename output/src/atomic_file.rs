//! Writing a file so that it is never seen half-written: everything goes
//! to a temporary file in the destination's directory, which is renamed
//! over the destination only once complete (rename(2) within one file
//! system is atomic), and the directory is synced so that the rename
//! outlives a crash. A failed or abandoned write removes the temporary
//! file and leaves any earlier file at the destination as it was.
//!
//! What is not a regular file is not replaced:
//! - a symlink is followed, and its target replaced in the target's
//!   directory; the link stays.
//! - a device, a FIFO or a socket that exists is written in place, with no
//!   temporary file and no rename (`-o /dev/null` must not replace the
//!   machine's `/dev/null`). What was written to it stays written.
//! - `-` is standard output, written in place.
//!
//! A replaced file keeps its permissions (and, when allowed, its owner).
//!
//! The temporary file is `tempfile`'s (a name no other writer can take, and
//! removed if dropped), and so is the rename (`TempPath::persist`). What is
//! ours is everything around it, which `tempfile` leaves to its caller:
//! deciding what the destination is before anything is created (symlinks,
//! devices, FIFOs, `-`), the fsync of the file and of its directory, and
//! the replaced file's permissions.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::TempPath;

/// A file being written; [`AtomicFile::commit`] puts it in place.
/// Dropping it without committing removes what was written, unless it is
/// written in place.
#[derive(Debug)]
pub struct AtomicFile {
    out: BufWriter<File>,
    /// The temporary file and the path it is renamed to; `None` when
    /// written in place.
    replace: Option<Replace>,
    destination: PathBuf,
}

#[derive(Debug)]
struct Replace {
    /// Removed when dropped, unless persisted by a commit.
    temporary: TempPath,
    /// The destination with its symlinks followed.
    target: PathBuf,
}

/// How many symlinks are followed, as Linux's own limit (ELOOP).
const MAX_SYMLINKS: usize = 40;

/// What is at a destination, once its symlinks are followed.
enum Found {
    /// Standard output.
    Stdout,
    /// Nothing, or a regular file (with its metadata): replaced at `path`.
    Replaced { path: PathBuf, existing: Option<std::fs::Metadata> },
    /// A device, FIFO or socket: written in place.
    InPlace { path: PathBuf },
}

/// Follows `destination`'s symlinks, and says what is there.
fn find(destination: &Path) -> Result<Found, FileError> {
    if destination.as_os_str() == "-" {
        return Ok(Found::Stdout);
    }
    let mut path = destination.to_owned();
    for _ in 0..MAX_SYMLINKS {
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Replaced { path, existing: None }),
            Err(e) => return Err(FileError::new(destination, "cannot look at what is there", e)),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let link = std::fs::read_link(&path).map_err(|e| FileError::new(destination, "cannot read the symlink", e))?;
            path = match path.parent() {
                Some(dir) => dir.join(link),
                None => link,
            };
        } else if kind.is_dir() {
            let e = io::Error::new(io::ErrorKind::IsADirectory, "is a directory");
            return Err(FileError::new(destination, "cannot write a file there", e));
        } else if kind.is_file() {
            return Ok(Found::Replaced { path, existing: Some(meta) });
        } else {
            return Ok(Found::InPlace { path });
        }
    }
    let e = io::Error::new(io::ErrorKind::InvalidInput, format!("more than {MAX_SYMLINKS} symlinks in a row"));
    Err(FileError::new(destination, "cannot follow the symlink", e))
}

impl AtomicFile {
    /// Creates the temporary file beside `destination` (beside its target,
    /// for a symlink), or opens `destination` if it is to be written in
    /// place. A FIFO's open waits for its reader.
    ///
    /// The error names the destination and says what to check.
    pub fn create(destination: &Path) -> Result<AtomicFile, FileError> {
        let (file, replace) = match find(destination)? {
            Found::Stdout => {
                // A file of its own (a dup of fd 1), so that writing it
                // needs no lock and shares no buffer with `print!`.
                let fd = io::stdout().as_fd().try_clone_to_owned().map_err(|e| FileError::new(destination, "cannot write standard output", e))?;
                (File::from(fd), None)
            }
            Found::InPlace { path } => {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| FileError::new(destination, "cannot open it for writing", e))?;
                (file, None)
            }
            Found::Replaced { path, existing } => {
                let (file, temporary) =
                    create_temporary(&path).map_err(|e| FileError::new(destination, "cannot create a file in its directory", e))?;
                if let Some(meta) = existing {
                    // On failure `temporary` is dropped, which removes it.
                    keep_permissions(&file, &meta)
                        .map_err(|e| FileError::new(destination, "cannot give the new file the old one's permissions", e))?;
                }
                (file, Some(Replace { temporary, target: path }))
            }
        };
        Ok(AtomicFile { out: BufWriter::with_capacity(1 << 16, file), replace, destination: destination.to_owned() })
    }

    /// Flushes, syncs and renames the file over its destination (a file
    /// written in place is only flushed: a pipe or device has nothing to
    /// sync).
    pub fn commit(mut self) -> Result<(), FileError> {
        let destination = self.destination.clone();
        self.out.flush().map_err(|e| FileError::new(&destination, "writing failed", e))?;
        if let Some(replace) = self.replace.take() {
            self.out.get_ref().sync_all().map_err(|e| FileError::new(&destination, "writing failed", e))?;
            // A failed rename gives the path back, and dropping it removes
            // the temporary file.
            replace
                .temporary
                .persist(&replace.target)
                .map_err(|e| FileError::new(&destination, "cannot move the finished file into place", e.error))?;
            sync_directory(&replace.target).map_err(|e| FileError::new(&destination, "cannot sync its directory", e))?;
        }
        Ok(())
    }

    /// The path asked for.
    pub fn destination(&self) -> &Path {
        &self.destination
    }

    /// The temporary file being written, for a writer that must open it by
    /// name (perf.data's, which seeks back to write its headers); `None`
    /// for a destination written in place, which cannot be seeked.
    pub fn temporary_path(&self) -> Option<&Path> {
        self.replace.as_ref().map(|r| &*r.temporary)
    }
}

/// Gives the new file the mode of the one it replaces, and its owner when
/// this process may (root may; others keep their own, as any editor does).
fn keep_permissions(file: &File, old: &std::fs::Metadata) -> io::Result<()> {
    let new = file.metadata()?;
    if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
        // EPERM for anyone but root; the file is then the writer's, as
        // any file it creates.
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
    }
    file.set_permissions(std::fs::Permissions::from_mode(old.permissions().mode() & 0o7777))
}

/// fsync(2) of the directory holding `path`, which makes its new entry
/// durable.
fn sync_directory(path: &Path) -> io::Result<()> {
    File::open(directory_of(path))?.sync_all()
}

fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Writes `bytes` to `destination` through an [`AtomicFile`].
pub fn write_atomically(destination: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let mut file = AtomicFile::create(destination)?;
    file.write_all(bytes).map_err(|e| FileError::new(destination, "writing failed", e))?;
    file.commit()
}

/// Checks now that a file can later be written at `destination`, so that a
/// recording is refused before it starts rather than lost at its end:
/// refuses a directory, and creates and removes a temporary file where a
/// regular file would be replaced.
///
/// A device, FIFO or socket, and `-`, are accepted without being opened:
/// opening a FIFO for writing waits for a reader, and a reader that came
/// would take our close for its end of file; opening some devices acts
/// (a watchdog starts, a tape rewinds on close). Whether one may be
/// written is known when it is opened to be written.
pub fn check_writable(destination: &Path) -> Result<(), FileError> {
    match find(destination)? {
        Found::Stdout | Found::InPlace { .. } => Ok(()),
        Found::Replaced { path, .. } => {
            // Removed again as it is dropped.
            create_temporary(&path).map_err(|e| FileError::new(destination, "cannot create a file in its directory", e))?;
            Ok(())
        }
    }
}

/// A new file `.NAME.XXXXXX.usertrace.tmp` beside `destination`: hidden,
/// and named by `tempfile` so that concurrent writers never share one. Its
/// mode is that of any new file (0666 less the umask), not `tempfile`'s
/// private 0600: the output is for its user to read as any other.
fn create_temporary(destination: &Path) -> io::Result<(File, TempPath)> {
    let name = destination.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "output".into());
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".usertrace.tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(directory_of(destination))
        .map(tempfile::NamedTempFile::into_parts)
}

/// A file could not be written: which, what failed, and why.
#[derive(Debug)]
pub struct FileError {
    /// The destination asked for.
    pub path: PathBuf,
    /// What failed.
    pub what: &'static str,
    /// The system's reason.
    pub source: io::Error,
}

impl FileError {
    fn new(path: &Path, what: &'static str, source: io::Error) -> FileError {
        FileError { path: path.to_owned(), what, source }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hint = match self.source.kind() {
            io::ErrorKind::NotFound => "; check that the directory exists",
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                "; check that the directory is writable, or choose another path"
            }
            io::ErrorKind::StorageFull => "; free some space, or choose another path",
            io::ErrorKind::IsADirectory => "; give a file name",
            _ => "",
        };
        if self.path.as_os_str() == "-" {
            write!(f, "standard output: {}: {}{hint}", self.what, self.source)
        } else {
            write!(f, "{}: {}: {}{hint}", self.path.display(), self.what, self.source)
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("usertrace-atomic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn the_destination_appears_only_when_committed() {
        let dir = scratch("commit");
        let dest = dir.join("out.json");
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"hello").unwrap();
        assert!(!dest.exists());
        f.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"hello");
        assert_eq!(entries(&dir), ["out.json"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_new_file_has_the_mode_any_new_file_gets_not_a_private_one() {
        let dir = scratch("mode");
        let plain = dir.join("plain");
        File::create(&plain).unwrap();
        let dest = dir.join("out.json");
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"x").unwrap();
        f.commit().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&dest), mode(&plain), "0666 less the umask, as File::create gives");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_and_names_the_destination() {
        let dir = scratch("rename");
        let dest = dir.join("out.json");
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"x").unwrap();
        // A directory where the file was to go: rename(2) refuses it.
        std::fs::create_dir(&dest).unwrap();
        let e = f.commit().unwrap_err();
        assert_eq!(e.what, "cannot move the finished file into place");
        assert!(e.to_string().starts_with(&format!("{}: ", dest.display())), "{e}");
        assert_eq!(entries(&dir), ["out.json"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_abandoned_write_leaves_the_old_file_and_no_temporary() {
        let dir = scratch("abandon");
        let dest = dir.join("out.json");
        std::fs::write(&dest, "old").unwrap();
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"new, half").unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        assert_eq!(entries(&dir), ["out.json"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_unwritable_destination_is_named_with_what_to_do() {
        let dir = scratch("unwritable");
        let e = check_writable(&dir.join("no/such/dir/out.pftrace")).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("no/such/dir/out.pftrace") && text.contains("check that the directory exists"), "{text}");
        let e = check_writable(&dir).unwrap_err();
        assert!(e.to_string().contains("give a file name"), "{e}");
        check_writable(&dir.join("fine.json")).unwrap();
        assert!(entries(&dir).is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }
}

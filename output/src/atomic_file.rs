//! Writing a file so that it is never seen half-written: everything goes
//! to a temporary file in the destination's directory, which is renamed
//! over the destination only once complete (rename(2) within one file
//! system is atomic). A failed or abandoned write removes the temporary
//! file and leaves any earlier file at the destination as it was.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file being written; [`AtomicFile::commit`] puts it in place.
/// Dropping it without committing removes what was written.
#[derive(Debug)]
pub struct AtomicFile {
    out: BufWriter<File>,
    temporary: PathBuf,
    destination: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Creates the temporary file beside `destination`.
    ///
    /// The error names the directory and says what to check.
    pub fn create(destination: &Path) -> Result<AtomicFile, FileError> {
        let temporary = temporary_path(destination);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .map_err(|e| FileError::new(destination, "cannot create a file in its directory", e))?;
        Ok(AtomicFile { out: BufWriter::with_capacity(1 << 16, file), temporary, destination: destination.to_owned(), committed: false })
    }

    /// Flushes, syncs and renames the file over its destination.
    pub fn commit(mut self) -> Result<(), FileError> {
        let destination = self.destination.clone();
        self.out.flush().map_err(|e| FileError::new(&destination, "writing failed", e))?;
        self.out.get_ref().sync_all().map_err(|e| FileError::new(&destination, "writing failed", e))?;
        std::fs::rename(&self.temporary, &destination).map_err(|e| FileError::new(&destination, "cannot move the finished file into place", e))?;
        self.committed = true;
        Ok(())
    }

    /// The final path.
    pub fn destination(&self) -> &Path {
        &self.destination
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

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temporary);
        }
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
/// creates and removes a temporary file in its directory, and refuses a
/// destination that is a directory.
pub fn check_writable(destination: &Path) -> Result<(), FileError> {
    if destination.is_dir() {
        let e = io::Error::new(io::ErrorKind::IsADirectory, "is a directory");
        return Err(FileError::new(destination, "cannot write a file there", e));
    }
    AtomicFile::create(destination).map(drop)
}

/// `.NAME.usertrace-PID-N.tmp` beside `destination`: hidden, and unique
/// per process and call so concurrent writers never share one.
fn temporary_path(destination: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    // ATOMICS: Relaxed; only uniqueness matters, not ordering.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = destination.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "output".into());
    let dir = match destination.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    dir.join(format!(".{name}.usertrace-{}-{n}.tmp", std::process::id()))
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
        write!(f, "{}: {}: {}{hint}", self.path.display(), self.what, self.source)
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

//! Choosing tracepoints: the tracefs events that `-e` patterns select.
//!
//! The pattern rule itself is the core's ([`usertrace::Pattern`]), which
//! the producer's attach handshake uses too.

use std::path::{Path, PathBuf};

use usertrace::{Pattern, USER_SYSTEMS};

use super::error::Error;
use super::format::EventFormat;

/// A tracepoint present in tracefs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The events directory it is in, e.g. `user_events`.
    pub system: String,
    /// The event's name.
    pub name: String,
    /// Its `events/<system>/<name>` directory, which holds `format`.
    pub dir: PathBuf,
}

/// Every event directory of the given systems (missing systems are empty).
pub fn scan(tracefs: &Path, systems: &[&str]) -> Result<Vec<Candidate>, Error> {
    let mut out = Vec::new();
    for system in systems {
        let dir = tracefs.join("events").join(system);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(Error::Io { path: dir, error }),
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                let name = entry.file_name().to_string_lossy().into_owned();
                out.push(Candidate { system: (*system).to_owned(), name, dir: path });
            }
        }
    }
    out.sort_by(|a, b| (&a.system, &a.name).cmp(&(&b.system, &b.name)));
    Ok(out)
}

/// Systems a set of patterns can touch.
pub fn systems_of(patterns: &[Pattern]) -> Vec<String> {
    let mut systems: Vec<String> = USER_SYSTEMS.iter().map(|s| (*s).to_owned()).collect();
    for p in patterns {
        if let Some(s) = p.system() {
            if !s.contains(['*', '?']) && !systems.iter().any(|known| known == s) {
                systems.push(s.to_owned());
            }
        }
    }
    systems
}

/// Reads and parses a candidate's `format` file.
pub fn load(candidate: &Candidate) -> Result<EventFormat, Error> {
    load_with_text(candidate).map(|(format, _)| format)
}

/// [`load`], with the file's text, which an archive carries.
pub(crate) fn load_with_text(candidate: &Candidate) -> Result<(EventFormat, String), Error> {
    let path = candidate.dir.join("format");
    let text = std::fs::read_to_string(&path).map_err(|error| Error::Io { path: path.clone(), error })?;
    let format = EventFormat::parse(&candidate.system, &text).map_err(|error| Error::Format { path, error })?;
    Ok((format, text))
}

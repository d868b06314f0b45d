//! Choosing tracepoints: `-e` patterns, exact or glob, against tracefs.
//!
//! A pattern is `[SYSTEM:]NAME` where both parts may use `*` and `?`.
//! Without a system it means user_events and user_events_multi; in the
//! latter, names carry a `.<hexid>` suffix that patterns need not spell.

use std::path::{Path, PathBuf};

use super::error::Error;
use super::format::EventFormat;

/// The tracefs systems user_events creates.
pub const USER_SYSTEMS: [&str; 2] = ["user_events", "user_events_multi"];

/// One parsed `-e` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    system: Option<String>,
    name: String,
    text: String,
}

impl Pattern {
    pub fn parse(text: &str) -> Result<Pattern, Error> {
        let bad = || Error::BadPattern { pattern: text.to_owned() };
        let (system, name) = match text.split_once(':') {
            Some((s, n)) => (Some(s), n),
            None => (None, text),
        };
        let ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.*?".contains(&b));
        if !ok(name) || system.is_some_and(|s| !ok(s)) {
            return Err(bad());
        }
        Ok(Pattern { system: system.map(str::to_owned), name: name.to_owned(), text: text.to_owned() })
    }

    /// Whether it has wildcards (and so may match events registered later).
    pub fn is_glob(&self) -> bool {
        self.text.contains(['*', '?'])
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn matches(&self, system: &str, name: &str) -> bool {
        let system_ok = match &self.system {
            Some(s) => glob(s, system),
            None => USER_SYSTEMS.contains(&system),
        };
        if !system_ok {
            return false;
        }
        if glob(&self.name, name) {
            return true;
        }
        // user_events_multi/<name>.<hexid>
        system == "user_events_multi" && name.rsplit_once('.').is_some_and(|(base, _)| glob(&self.name, base))
    }
}

/// `*` matches any run, `?` any one character; everything else itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            // Let the last star swallow one more character.
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// A tracepoint present in tracefs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub system: String,
    pub name: String,
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
        if let Some(s) = &p.system {
            if !s.contains(['*', '?']) && !systems.contains(s) {
                systems.push(s.clone());
            }
        }
    }
    systems
}

/// Reads and parses a candidate's `format` file.
pub fn load(candidate: &Candidate) -> Result<EventFormat, Error> {
    let path = candidate.dir.join("format");
    let text = std::fs::read_to_string(&path).map_err(|error| Error::Io { path: path.clone(), error })?;
    EventFormat::parse(&candidate.system, &text).map_err(|error| Error::Format { path, error })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_a_shell() {
        assert!(glob("myapp_*", "myapp_request"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "aXXbYYc"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(!glob("myapp_*", "other_request"));
        assert!(glob("*_done", "req_done"));
        assert!(!glob("*_done", "req_done_not"));
    }

    #[test]
    fn patterns_cover_user_systems_and_multi_format_names() {
        let p = Pattern::parse("myapp_*").unwrap();
        assert!(p.is_glob());
        assert!(p.matches("user_events", "myapp_x"));
        assert!(p.matches("user_events_multi", "myapp_x.1f"));
        assert!(!p.matches("sched", "myapp_x"));
        let exact = Pattern::parse("user_events:ping").unwrap();
        assert!(!exact.is_glob());
        assert!(exact.matches("user_events", "ping"));
        assert!(!exact.matches("user_events_multi", "ping.3"));
    }

    #[test]
    fn bad_patterns_are_refused() {
        for bad in ["", ":", "a:", "a b", "a;b", "x/y", "ü"] {
            assert!(matches!(Pattern::parse(bad), Err(Error::BadPattern { .. })), "{bad:?}");
        }
    }
}

//! Event patterns: `[SYSTEM:]NAME`, exact or with `*` and `?`.
//!
//! The producer matches them when a recorder that launched it asks for
//! events (the attach handshake), and the consumer when it selects
//! tracepoints in tracefs; both must agree, so the rule lives here once.
//! Without a system a pattern means user_events and user_events_multi; in
//! the latter, names carry a `.<hexid>` suffix that patterns need not spell.

use std::fmt;

/// The tracefs systems user_events creates.
pub const USER_SYSTEMS: [&str; 2] = ["user_events", "user_events_multi"];

/// One parsed `-e` pattern.
///
/// ```
/// use usertrace::Pattern;
///
/// let p = Pattern::parse("myapp_*")?;
/// assert!(p.is_glob());
/// assert!(p.matches("user_events", "myapp_request"));
/// // Multi-format events carry a `.<hexid>` suffix that the pattern need not spell.
/// assert!(p.matches("user_events_multi", "myapp_request.1a"));
/// // Without a system, only the user_events systems are searched.
/// assert!(!p.matches("sched", "myapp_request"));
///
/// let exact = Pattern::parse("sched:sched_switch")?;
/// assert_eq!(exact.system(), Some("sched"));
/// assert!(Pattern::parse("bad name").is_err());
/// # Ok::<(), usertrace::PatternError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    system: Option<String>,
    name: String,
    text: String,
}

impl Pattern {
    /// Parses `[SYSTEM:]NAME`; both parts `[A-Za-z0-9_.*?]+`.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let bad = || PatternError { pattern: text.to_owned() };
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

    /// The system part, if the pattern names one.
    pub fn system(&self) -> Option<&str> {
        self.system.as_deref()
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the tracepoint `system:name` is selected.
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
///
/// ```
/// assert!(usertrace::glob("req*_v?", "request_v2"));
/// assert!(!usertrace::glob("req*_v?", "request_v10"));
/// ```
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

/// A pattern that is empty or has characters no event name can contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    pattern: String,
}

impl PatternError {
    /// The pattern as it was given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad event pattern \"{}\": use [SYSTEM:]NAME with ASCII letters, digits, '_', '.', \
             and the wildcards '*' and '?'",
            self.pattern.escape_debug()
        )
    }
}

impl std::error::Error for PatternError {}

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
            assert!(matches!(Pattern::parse(bad), Err(PatternError { .. })), "{bad:?}");
        }
    }
}

//! Event patterns: `[SYSTEM:]NAME`, exact or with `*` and `?`; and
//! `PROVIDER:L<level>[K<keyword>]`, which selects EventHeader tracepoints
//! (`<Provider>_L<level>K<keyword>...`) by provider, level and keyword.
//!
//! The producer matches them when a recorder that launched it asks for
//! events (the attach handshake), and the consumer when it selects
//! tracepoints in tracefs; both must agree, so the rule lives here once.
//! Without a system a pattern means user_events and user_events_multi; in
//! the latter, names carry a `.<hexid>` suffix that patterns need not spell.
//!
//! The matching of `*` and `?` is ours, not `globset`'s: the producer needs
//! it, and the producer crate depends on `libc` alone, which every program
//! that links it (C, Python, Java through the same library) is glad of;
//! `globset` would bring `regex-automata`, `aho-corasick` and `bstr` into
//! each. Its strengths, `[...]` classes, `**` across path separators and
//! many patterns matched at once, are for paths: event names have no
//! separator, `-e` takes a handful of patterns, and the charset check below
//! refuses `[` anyway. [`glob`] is a standard linear-time wildcard match,
//! tested beside it.

use std::fmt;

use crate::eventheader_name::EventHeaderName;

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
    /// For `PROVIDER:L<level>[K<keyword>]` (PROVIDER is then `name`).
    eventheader: Option<EventHeaderSelection>,
}

/// What `PROVIDER:L<level>[K<keyword>]` asks of an EventHeader tracepoint
/// beside its provider: a level up to `level` (1 is the most severe), and a
/// keyword sharing a bit with `keywords` (if given) or being 0, as ETW and
/// LinuxTracepoints treat keyword 0 ("any").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EventHeaderSelection {
    level: u8,
    keywords: Option<u64>,
}

impl EventHeaderSelection {
    /// `L<level>[K<keyword>]`, level in decimal, keyword mask in hex (an
    /// optional `0x`); `None` for anything else, which is then a name.
    fn parse(text: &str) -> Option<EventHeaderSelection> {
        let rest = text.strip_prefix('L')?;
        let (level, keywords) = match rest.split_once('K') {
            Some((level, keywords)) => {
                let hex = keywords.strip_prefix("0x").unwrap_or(keywords);
                (level, Some(u64::from_str_radix(hex, 16).ok().filter(|_| !hex.starts_with('+'))?))
            }
            None => (rest, None),
        };
        let level = level.parse::<u8>().ok().filter(|_| level.bytes().all(|b| b.is_ascii_digit()))?;
        Some(EventHeaderSelection { level, keywords })
    }

    fn matches(&self, provider: &str, name: &str) -> bool {
        let Some(n) = EventHeaderName::parse(name) else { return false };
        let keyword_ok = match self.keywords {
            Some(mask) => n.keyword == 0 || n.keyword & mask != 0,
            None => true,
        };
        glob(provider, n.provider) && n.level >= 1 && n.level <= self.level && keyword_ok
    }
}

impl Pattern {
    /// Parses `[SYSTEM:]NAME`, both parts `[A-Za-z0-9_.*?]+`, or
    /// `PROVIDER:L<level>[K<keyword>]` (no system then: EventHeader
    /// tracepoints are in the user_events systems).
    ///
    /// ```
    /// use usertrace::Pattern;
    ///
    /// // Level up to 4 (information), any keyword bit of 0x5.
    /// let p = Pattern::parse("MyProvider:L4K5")?;
    /// assert!(p.is_glob());
    /// assert!(p.matches("user_events", "MyProvider_L4K1"));
    /// assert!(p.matches("user_events", "MyProvider_L2K4Gmygroup"));
    /// assert!(!p.matches("user_events", "MyProvider_L5K1"));
    /// assert!(!p.matches("user_events", "MyProvider_L4K2"));
    /// assert!(!p.matches("user_events", "Other_L4K1"));
    /// assert!(Pattern::parse("My*:L5")?.matches("user_events", "MyOther_L5K80"));
    /// # Ok::<(), usertrace::PatternError>(())
    /// ```
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
        if let Some((provider, selection)) = system.zip(EventHeaderSelection::parse(name)) {
            let (name, text) = (provider.to_owned(), text.to_owned());
            return Ok(Pattern { system: None, name, text, eventheader: Some(selection) });
        }
        Ok(Pattern { system: system.map(str::to_owned), name: name.to_owned(), text: text.to_owned(), eventheader: None })
    }

    /// Whether it has wildcards or selects EventHeader tracepoints (and so
    /// may match events registered later).
    pub fn is_glob(&self) -> bool {
        self.eventheader.is_some() || self.text.contains(['*', '?'])
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
        if let Some(selection) = &self.eventheader {
            // user_events_multi/<name>.<hexid>
            let base = match system {
                "user_events_multi" => name.rsplit_once('.').map_or(name, |(base, _)| base),
                _ => name,
            };
            return selection.matches(&self.name, base);
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
             and the wildcards '*' and '?', or PROVIDER:L<level>[K<keyword>] for EventHeader events",
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
    fn eventheader_selections_pick_provider_level_and_keyword() {
        let p = Pattern::parse("MyProvider:L4K0x5").unwrap();
        assert_eq!(p.system(), None);
        assert!(p.is_glob());
        assert!(p.matches("user_events", "MyProvider_L1K1"));
        assert!(p.matches("user_events", "MyProvider_L4K4"));
        // Keyword 0 is "any keyword".
        assert!(p.matches("user_events", "MyProvider_L4K0"));
        assert!(p.matches("user_events_multi", "MyProvider_L3K1.a"));
        assert!(!p.matches("user_events", "MyProvider_L5K1"));
        assert!(!p.matches("user_events", "MyProvider_L4K2"));
        assert!(!p.matches("user_events", "MyProvider_L0K1"));
        assert!(!p.matches("user_events", "MyProviderX_L4K1"));
        assert!(!p.matches("sched", "MyProvider_L4K1"));
        assert!(!p.matches("user_events", "myapp_request"));
        // Without a keyword mask every keyword goes; the provider may be a glob.
        let all = Pattern::parse("*:L5").unwrap();
        assert!(all.matches("user_events", "Any_L5Kffffffffffffffff"));
        assert!(all.matches("user_events", "Other_L1K0Gg"));
        assert!(!all.matches("user_events", "myapp_request"));
        // A name part that is not L<level>[K<keyword>] stays a name.
        let name = Pattern::parse("sched:L4x").unwrap();
        assert_eq!(name.system(), Some("sched"));
        assert!(!name.is_glob());
        for not_selection in ["P:L", "P:LK1", "P:L4K", "P:L256", "P:L4Kz"] {
            assert_eq!(Pattern::parse(not_selection).unwrap().system(), Some("P"), "{not_selection}");
        }
    }

    #[test]
    fn bad_patterns_are_refused() {
        for bad in ["", ":", "a:", "a b", "a;b", "x/y", "ü"] {
            assert!(matches!(Pattern::parse(bad), Err(PatternError { .. })), "{bad:?}");
        }
    }
}

//! `NAME>DURATION`: a span named NAME (`*` and `?` wildcards allowed) that
//! lasts longer than DURATION. The flight recorder's `--trigger-span` dumps
//! on one; tail-based export's `--tail` keeps the trace that holds one.
//! Both read and match it here, so the two can never disagree on what a
//! slow span is.

use std::fmt;
use std::time::Duration;

/// A slow-span rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowSpan {
    name: String,
    longer_than: Duration,
}

impl SlowSpan {
    /// Reads `handle_request>250ms` or `db_*>2s` (durations as humantime
    /// reads them: `500ms`, `2s`, `1m`; above zero).
    pub fn parse(text: &str) -> Result<SlowSpan, String> {
        let (name, duration) = text.split_once('>').ok_or_else(|| format!("`{text}`: give NAME>DURATION, such as handle_request>250ms"))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(format!("`{text}`: the span's name is missing, as in handle_request>250ms"));
        }
        let longer_than = match humantime::parse_duration(duration.trim()) {
            Ok(d) if !d.is_zero() => d,
            Ok(_) => return Err(format!("`{text}`: give a time above 0, such as 250ms or 2s")),
            Err(e) => return Err(format!("`{text}`: {e}: give a time such as 250ms or 2s")),
        };
        Ok(SlowSpan { name: name.to_owned(), longer_than })
    }

    /// Whether a span of this name and length breaks the rule: strictly
    /// longer than its duration.
    pub fn matches(&self, name: &str, duration: Duration) -> bool {
        duration > self.longer_than && usertrace::glob(&self.name, name)
    }

    /// The duration a span must exceed.
    pub fn longer_than(&self) -> Duration {
        self.longer_than
    }
}

impl fmt::Display for SlowSpan {
    /// As written: `NAME>DURATION`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}>{}", self.name, humantime::format_duration(self.longer_than))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_matches_names_by_wildcard_and_only_longer_durations() {
        let rule = SlowSpan::parse("handle_*>250ms").unwrap();
        assert!(rule.matches("handle_request", Duration::from_millis(251)));
        assert!(!rule.matches("handle_request", Duration::from_millis(250)));
        assert!(!rule.matches("other", Duration::from_secs(5)));
        assert_eq!(rule.to_string(), "handle_*>250ms");
    }

    #[test]
    fn bad_rules_say_what_to_write() {
        assert!(SlowSpan::parse("handle_request").unwrap_err().contains("NAME>DURATION"));
        assert!(SlowSpan::parse(">2s").unwrap_err().contains("name is missing"));
        assert!(SlowSpan::parse("a>0s").unwrap_err().contains("above 0"));
        assert!(SlowSpan::parse("a>soon").unwrap_err().contains("such as 250ms"));
    }
}

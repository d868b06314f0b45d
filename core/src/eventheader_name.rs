//! EventHeader tracepoint names: `<Provider>_L<level>K<keyword>[G<group>][options]`,
//! level and keyword in lowercase hex, as LinuxTracepoints registers them.
//!
//! Written here rather than taken from Microsoft's `tracepoint_decode`: that
//! crate reads a name only while it walks an event's payload, and selecting
//! tracepoints (`-e`, the rescan) happens before any event has arrived. The
//! rule is the one its enumerator applies (the last `_` ends the provider,
//! then `L` and `K` with lowercase hex digits, then nothing or an
//! uppercase-letter option such as `Gmygroup`).

/// The field that holds a decoded EventHeader event's provider. The consumer
/// adds it after the event's own fields, and the timeline names the event
/// `<provider>:<event>` by it and [`EVENTHEADER_EVENT_FIELD`], as
/// Microsoft's decoders do.
pub const EVENTHEADER_PROVIDER_FIELD: &str = "meta.provider";
/// The field that holds a decoded EventHeader event's own name, from its
/// metadata (many events share one tracepoint).
pub const EVENTHEADER_EVENT_FIELD: &str = "meta.event";

/// `<provider>:<event>`: the one spelling of a decoded EventHeader event's
/// name, as Microsoft's decoders print it (`MyProvider:Request`). Many
/// events share one tracepoint, so this, not the tracepoint, is the name
/// every output gives the event.
///
/// ```
/// assert_eq!(usertrace::eventheader_event_name("Shop", "Checkout"), "Shop:Checkout");
/// ```
pub fn eventheader_event_name(provider: &str, event: &str) -> String {
    format!("{provider}:{event}")
}

/// The parts of an EventHeader tracepoint's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventHeaderName<'a> {
    /// The provider, e.g. `MyProvider`.
    pub provider: &'a str,
    /// The event level: 1 critical, 2 error, 3 warning, 4 information, 5 verbose.
    pub level: u8,
    /// The keyword bits of the events written to this tracepoint.
    pub keyword: u64,
    /// What follows the keyword, e.g. `Gmygroup`; empty if nothing.
    pub options: &'a str,
}

impl<'a> EventHeaderName<'a> {
    /// Splits `name`, or `None` if it is not an EventHeader tracepoint name.
    ///
    /// ```
    /// use usertrace::EventHeaderName;
    ///
    /// let n = EventHeaderName::parse("My_Provider_L4K1fGmygroup").unwrap();
    /// assert_eq!((n.provider, n.level, n.keyword, n.options), ("My_Provider", 4, 0x1f, "Gmygroup"));
    /// assert!(EventHeaderName::parse("myapp_request").is_none());
    /// ```
    pub fn parse(name: &'a str) -> Option<EventHeaderName<'a>> {
        let (provider, attributes) = name.rsplit_once('_')?;
        if provider.is_empty() {
            return None;
        }
        let (level, rest) = lowercase_hex(attributes.strip_prefix('L')?)?;
        let (keyword, options) = lowercase_hex(rest.strip_prefix('K')?)?;
        if !options.is_empty() && !options.starts_with(|c: char| c.is_ascii_uppercase()) {
            return None;
        }
        Some(EventHeaderName { provider, level: u8::try_from(level).ok()?, keyword, options })
    }
}

/// A run of at least one lowercase hex digit (at most 16), and what follows it.
fn lowercase_hex(text: &str) -> Option<(u64, &str)> {
    let end = text.find(|c: char| !matches!(c, '0'..='9' | 'a'..='f')).unwrap_or(text.len());
    if end == 0 || end > 16 {
        return None;
    }
    Some((u64::from_str_radix(&text[..end], 16).ok()?, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_as_linuxtracepoints_writes_them() {
        let n = EventHeaderName::parse("MyProvider_L5K0").unwrap();
        assert_eq!((n.provider, n.level, n.keyword, n.options), ("MyProvider", 5, 0, ""));
        let n = EventHeaderName::parse("P_LaK8000000000000000").unwrap();
        assert_eq!((n.level, n.keyword), (10, 1 << 63));
        assert_eq!(EventHeaderName::parse("P_L4K1Gg").unwrap().options, "Gg");
    }

    #[test]
    fn other_names_are_not_eventheader() {
        for name in [
            "myapp_request",
            "_L4K1",
            "P_L4",
            "P_K1",
            "P_LK1",
            "P_L4K",
            "P_L4K1g",
            "P_L4KA",
            "P_L100K1",
            "P_L4K12345678901234567",
        ] {
            assert_eq!(EventHeaderName::parse(name), None, "{name}");
        }
    }
}

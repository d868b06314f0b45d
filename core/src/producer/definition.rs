//! A validated event definition: its name, its fields, and the kernel
//! format string built from them, once.
//!
//! Every way to declare an event (the `tracepoints!` macro, run-time
//! tracepoints, and the C, Python and Java bindings) goes through here, so
//! a name or field mistake is found by one rule with one message, whatever
//! the language.

use super::field::{format_string, Field};
use super::payload;
use super::value::Value;
use crate::Error;

/// An event's name and fields, checked against every kernel limit.
///
/// ```
/// use usertrace::{Definition, Field, FieldType, Value};
///
/// let def = Definition::with_provider("myapp", "request", vec![
///     Field::new("id", FieldType::U64),
///     Field::new("path", FieldType::Str),
/// ])?;
/// assert_eq!(def.name(), "myapp_request");
/// assert_eq!(def.format(), "myapp_request u64 id;__rel_loc char[] path");
/// def.validate(&[Value::U64(7), Value::Str("/index.html")])?;
/// assert!(def.validate(&[Value::U64(7)]).is_err());
/// # Ok::<(), usertrace::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    name: String,
    fields: Vec<Field>,
    format: String,
}

impl Definition {
    /// Checks the full event name and the fields, and builds the format.
    pub fn new(name: impl Into<String>, fields: Vec<Field>) -> Result<Self, Error> {
        let name = name.into();
        let format = format_string(&name, &fields)?;
        Ok(Definition { name, fields, format })
    }

    /// The event `<provider>_<event>`; each part is checked on its own, so
    /// a message names the part that is wrong.
    pub fn with_provider(provider: &str, event: &str, fields: Vec<Field>) -> Result<Self, Error> {
        validate_name("provider", provider)?;
        validate_name("event", event)?;
        Definition::new(format!("{provider}_{event}"), fields)
    }

    /// A span's begin event `<provider>_<event>`: the `span_begin` id,
    /// then `fields` (see [`span`](mod@crate::span) for the convention).
    pub fn span_begin(provider: &str, event: &str, fields: Vec<Field>) -> Result<Self, Error> {
        Definition::with_provider(provider, event, super::span::span_begin_fields(fields))
    }

    /// The provider's `<provider>_span_end` event, which ends its spans.
    pub fn span_end(provider: &str) -> Result<Self, Error> {
        Definition::with_provider(provider, super::span::SPAN_END_EVENT, super::span::SPAN_END_FIELDS.to_vec())
    }

    /// The provider's `<provider>_span_error` event, which ends a span
    /// because of an error: `span_end`, then the `error` string.
    pub fn span_error(provider: &str) -> Result<Self, Error> {
        Definition::with_provider(provider, super::span::SPAN_ERROR_EVENT, super::span::SPAN_ERROR_FIELDS.to_vec())
    }

    /// A completed span's event: `span_start_ns`, `span_duration_ns`,
    /// then `fields`.
    pub fn completed_span(provider: &str, event: &str, fields: Vec<Field>) -> Result<Self, Error> {
        Definition::with_provider(provider, event, super::span::completed_span_fields(fields))
    }

    /// The kernel's event name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The fields, in declaration (and payload) order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The `name field;field` string given to the kernel.
    pub fn format(&self) -> &str {
        &self.format
    }

    /// Checks `values` as an emit would (count, types, lengths, NUL bytes
    /// in strings, the payload size perf can record), writing nothing.
    pub fn validate(&self, values: &[Value<'_>]) -> Result<(), Error> {
        payload::validate_values(&self.name, &self.fields, values).map(drop)
    }

    pub(crate) fn into_parts(self) -> (String, Vec<Field>, String) {
        (self.name, self.fields, self.format)
    }
}

/// `Ok` if `name` is a valid `what` name (`provider`, `event` or `field`):
/// `[A-Za-z0-9_]+`. The error says which name and what to use instead.
pub fn validate_name(what: &'static str, name: &str) -> Result<(), Error> {
    if super::field::is_valid_name(name) {
        Ok(())
    } else {
        Err(Error::InvalidName { what, name: name.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, FieldType};

    #[test]
    fn the_provider_and_event_are_named_apart_in_errors() {
        let err = Definition::with_provider("my app", "x", vec![]).unwrap_err();
        assert!(matches!(err, Error::InvalidName { what: "provider", .. }), "{err}");
        let err = Definition::with_provider("app", "x:y", vec![]).unwrap_err();
        assert!(matches!(err, Error::InvalidName { what: "event", .. }), "{err}");
    }

    #[test]
    fn validate_refuses_what_emit_refuses() {
        let def = Definition::new("ev", vec![Field::new("s", FieldType::Str), Field::new("c", FieldType::CharArray(2))]).unwrap();
        assert!(def.validate(&[Value::Str("ok"), Value::Str("ab")]).is_ok());
        assert_eq!(def.validate(&[Value::Str("a\0b"), Value::Str("")]).unwrap_err().kind(), ErrorKind::ValueMismatch);
        assert_eq!(def.validate(&[Value::Str(""), Value::Str("abc")]).unwrap_err().kind(), ErrorKind::ValueMismatch);
        let big = "x".repeat(9000);
        assert_eq!(def.validate(&[Value::Str(&big), Value::Str("")]).unwrap_err().kind(), ErrorKind::PayloadTooLarge);
    }
}

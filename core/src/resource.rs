//! A process's OpenTelemetry resource: the `service.name` and other
//! attributes that name the service a process is, as its
//! `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` say.
//!
//! A producer needs to do nothing for its resource to be known: the
//! recorder reads these two variables from each process's environment
//! (`/proc/PID/environ`) the first time the process's events reach it, on
//! either transport, and names the process's spans and logs by them. This
//! module is the one rule for reading them, used by the recorder for the
//! processes it records and for its own defaults.
//!
//! The rule is OpenTelemetry's: `OTEL_RESOURCE_ATTRIBUTES` is
//! `key=value,key2=value2`, values percent-encoded; `OTEL_SERVICE_NAME`,
//! when set and not empty, is `service.name` and wins over a
//! `service.name` in the attributes. A malformed `OTEL_RESOURCE_ATTRIBUTES`
//! is discarded whole, as the specification asks of SDKs, so a process is
//! named as its own SDK would name it.

use std::fmt;

use percent_encoding::percent_decode_str;

/// The variable that names a process's service.
pub const SERVICE_NAME_VAR: &str = "OTEL_SERVICE_NAME";
/// The variable that holds a process's other resource attributes.
pub const RESOURCE_ATTRIBUTES_VAR: &str = "OTEL_RESOURCE_ATTRIBUTES";
/// The resource attribute that names the service.
pub const SERVICE_NAME_KEY: &str = "service.name";

/// An `OTEL_RESOURCE_ATTRIBUTES` entry that is not `key=value` with a
/// percent-encoded UTF-8 value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadAttribute(pub String);

impl fmt::Display for BadAttribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{RESOURCE_ATTRIBUTES_VAR} has a bad entry {:?}: write key=value pairs separated by commas, values percent-encoded",
            self.0
        )
    }
}

impl std::error::Error for BadAttribute {}

/// `key=value,...` as pairs in their order: keys trimmed, values trimmed
/// and percent-decoded, empty entries skipped.
pub fn parse_attributes(value: &str) -> Result<Vec<(String, String)>, BadAttribute> {
    value
        .split(',')
        .filter(|entry| !entry.trim().is_empty())
        .map(|entry| {
            let bad = || BadAttribute(entry.to_owned());
            let (key, value) = entry.split_once('=').ok_or_else(bad)?;
            let key = key.trim();
            if key.is_empty() {
                return Err(bad());
            }
            let value = percent_decode_str(value.trim()).decode_utf8().map_err(|_| bad())?;
            Ok((key.to_owned(), value.into_owned()))
        })
        .collect()
}

/// The resource a process with these variables declares (`var` looks one
/// up): its attributes, `service.name` first when it names one. Empty when
/// it sets neither variable.
pub fn from_variables(var: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let mut attributes = var(RESOURCE_ATTRIBUTES_VAR).and_then(|v| parse_attributes(&v).ok()).unwrap_or_default();
    if let Some(service) = var(SERVICE_NAME_VAR).filter(|s| !s.trim().is_empty()) {
        attributes.retain(|(key, _)| key != SERVICE_NAME_KEY);
        attributes.insert(0, (SERVICE_NAME_KEY.to_owned(), service.trim().to_owned()));
    } else if let Some(at) = attributes.iter().position(|(key, _)| key == SERVICE_NAME_KEY) {
        let service = attributes.remove(at);
        attributes.insert(0, service);
    }
    attributes
}

/// The resource declared by an environment block as `/proc/PID/environ`
/// holds it: `NAME=value` strings, each ended by a NUL. Bytes that are not
/// UTF-8 leave that variable unset.
pub fn from_environ(block: &[u8]) -> Vec<(String, String)> {
    let lookup = |name: &str| {
        block.split(|&b| b == 0).rev().find_map(|entry| {
            let value = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
            std::str::from_utf8(value).ok().map(str::to_owned)
        })
    };
    from_variables(lookup)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn attributes_are_percent_decoded_pairs_in_order() {
        assert_eq!(
            parse_attributes("deployment.environment=prod, team=a%2Cb,,").unwrap(),
            pairs(&[("deployment.environment", "prod"), ("team", "a,b")])
        );
        assert_eq!(parse_attributes("=x"), Err(BadAttribute("=x".into())));
        assert_eq!(parse_attributes("novalue"), Err(BadAttribute("novalue".into())));
        assert_eq!(parse_attributes("k=%ff"), Err(BadAttribute("k=%ff".into())));
    }

    #[test]
    fn the_service_name_variable_wins_and_comes_first() {
        let env = |name: &str| match name {
            SERVICE_NAME_VAR => Some("checkout".to_owned()),
            RESOURCE_ATTRIBUTES_VAR => Some("team=pay,service.name=other".to_owned()),
            _ => None,
        };
        assert_eq!(from_variables(env), pairs(&[("service.name", "checkout"), ("team", "pay")]));
    }

    #[test]
    fn a_service_name_in_the_attributes_serves_when_the_variable_is_unset_or_empty() {
        let env = |name: &str| match name {
            SERVICE_NAME_VAR => Some(" ".to_owned()),
            RESOURCE_ATTRIBUTES_VAR => Some("team=pay,service.name=billing".to_owned()),
            _ => None,
        };
        assert_eq!(from_variables(env), pairs(&[("service.name", "billing"), ("team", "pay")]));
    }

    #[test]
    fn malformed_attributes_are_discarded_whole_and_the_service_name_kept() {
        let env = |name: &str| match name {
            SERVICE_NAME_VAR => Some("checkout".to_owned()),
            RESOURCE_ATTRIBUTES_VAR => Some("team=pay,broken".to_owned()),
            _ => None,
        };
        assert_eq!(from_variables(env), pairs(&[("service.name", "checkout")]));
        assert_eq!(from_variables(|_| None), vec![]);
    }

    #[test]
    fn an_environment_block_is_read_as_proc_shows_it() {
        let block = b"PATH=/bin\0OTEL_SERVICE_NAME=front\0OTEL_RESOURCE_ATTRIBUTES=a=1\0OTEL_SERVICE_NAMEX=no\0";
        assert_eq!(from_environ(block), pairs(&[("service.name", "front"), ("a", "1")]));
        assert_eq!(from_environ(b"OTEL_SERVICE_NAME=\xff\0"), vec![]);
        assert_eq!(from_environ(b""), vec![]);
    }
}

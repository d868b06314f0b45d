//! Header helpers: read a trace context from the headers of a request
//! that came in, write one into the headers of a request that goes out,
//! whatever holds them. No HTTP library: a carrier is anything that can
//! look a header up ([`Extractor`]) or set one ([`Injector`]); maps of
//! strings are both already.
//!
//! Header names are matched without regard to ASCII case, as HTTP's are:
//! a map that holds `Traceparent` is read as one that holds `traceparent`.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// The header that carries the trace id, the parent's span id and flags.
pub const TRACEPARENT_HEADER: &str = "traceparent";
/// The header that carries vendors' own entries.
pub const TRACESTATE_HEADER: &str = "tracestate";

/// What headers can be read from.
pub trait Extractor {
    /// The value of header `name` (given in lowercase), if present; a
    /// name in another case counts as the same.
    fn get(&self, name: &str) -> Option<&str>;
}

/// What headers can be written into.
pub trait Injector {
    /// Sets header `name` (lowercase) to `value`, replacing it if present.
    fn set(&mut self, name: &str, value: String);
}

impl<S: BuildHasher> Extractor for HashMap<String, String, S> {
    fn get(&self, name: &str) -> Option<&str> {
        match HashMap::get(self, name) {
            Some(v) => Some(v),
            None => self.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()),
        }
    }
}

impl Extractor for BTreeMap<String, String> {
    fn get(&self, name: &str) -> Option<&str> {
        match BTreeMap::get(self, name) {
            Some(v) => Some(v),
            None => self.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()),
        }
    }
}

/// A list of `(name, value)` pairs, as many HTTP libraries give headers:
/// the first of that name.
impl<K: AsRef<str>, V: AsRef<str>> Extractor for [(K, V)] {
    fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name)).map(|(_, v)| v.as_ref())
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Extractor for Vec<(K, V)> {
    fn get(&self, name: &str) -> Option<&str> {
        Extractor::get(self.as_slice(), name)
    }
}

impl<S: BuildHasher> Injector for HashMap<String, String, S> {
    fn set(&mut self, name: &str, value: String) {
        self.retain(|k, _| !k.eq_ignore_ascii_case(name));
        self.insert(name.to_owned(), value);
    }
}

impl Injector for BTreeMap<String, String> {
    fn set(&mut self, name: &str, value: String) {
        self.retain(|k, _| !k.eq_ignore_ascii_case(name));
        self.insert(name.to_owned(), value);
    }
}

impl Injector for Vec<(String, String)> {
    fn set(&mut self, name: &str, value: String) {
        self.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.push((name.to_owned(), value));
    }
}

/// A header value without the optional whitespace HTTP allows around it.
pub(super) fn trim_ows(value: &str) -> &str {
    value.trim_matches([' ', '\t'])
}

//! The `tracestate` header: vendors' own `key=value` entries, which a
//! trace carries from service to service beside its `traceparent`.
//! usertrace adds no entry of its own; it carries what came in, as W3C
//! Trace Context (Level 1, §3.3) asks, within the limits it sets:
//!
//! - A list of at most [`MAX_TRACESTATE_MEMBERS`] (32) members, separated
//!   by commas and optional spaces or tabs; empty members are dropped.
//! - A key is `lcalpha 0*255(lcalpha / DIGIT / "_" / "-" / "*" / "/")`, or
//!   `tenant@system` (a tenant of 1 to 241 of those starting with a letter
//!   or digit, a system of 1 to 14 starting with a letter); a key appears
//!   once. A value is 1 to 256 printable ASCII characters but `,` and `=`,
//!   the last not a space.
//! - Any member that breaks these, or more than 32 members, and the whole
//!   header is dropped, as the specification says a vendor must when it
//!   cannot parse it.
//! - Kept, the list is written without the spaces around its commas. Over
//!   [`MAX_TRACESTATE_LEN`] (512) characters, members over 128 characters
//!   go first, then members from the end, until it fits.
//!
//! Input over [`MAX_TRACESTATE_INPUT`] bytes is not read.

use std::sync::Arc;

/// The most members a `tracestate` list has.
pub const MAX_TRACESTATE_MEMBERS: usize = 32;

/// The longest `tracestate` carried on.
pub const MAX_TRACESTATE_LEN: usize = 512;

/// The longest `tracestate` input read: 32 members of the largest key
/// and value, with room for spaces.
pub const MAX_TRACESTATE_INPUT: usize = 32 * 1024;

/// Members longer than this are dropped first when the list is too long.
const LONG_MEMBER: usize = 128;

/// A valid `tracestate` list, shared: a span that carries it on (and
/// every span begun under that one) takes a reference, not a copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TraceState(Arc<str>);

impl TraceState {
    /// The list in `header`, within W3C's limits; `None` if it is empty,
    /// or is no valid list (then nothing of it is carried on).
    pub fn parse(header: &str) -> Option<TraceState> {
        if header.len() > MAX_TRACESTATE_INPUT {
            return None;
        }
        let mut members: Vec<(&str, &str)> = Vec::new();
        for member in header.split(',').map(|m| m.trim_matches([' ', '\t'])).filter(|m| !m.is_empty()) {
            let (key, value) = member.split_once('=')?;
            if !valid_key(key) || !valid_value(value) || members.iter().any(|(k, _)| *k == key) {
                return None;
            }
            members.push((key, value));
            if members.len() > MAX_TRACESTATE_MEMBERS {
                return None;
            }
        }
        fit(&mut members);
        if members.is_empty() {
            return None;
        }
        let joined: Vec<String> = members.iter().map(|(k, v)| format!("{k}={v}")).collect();
        Some(TraceState(joined.join(",").into()))
    }

    /// The list as it is carried on: `key=value` members joined by `,`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its members, `(key, value)`, in order (the most recent vendor's first).
    pub fn members(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.split(',').filter_map(|m| m.split_once('='))
    }
}

impl std::fmt::Display for TraceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Drops members until the joined list fits [`MAX_TRACESTATE_LEN`]: the
/// long ones first, from the end, then any from the end.
fn fit(members: &mut Vec<(&str, &str)>) {
    let member_len = |(k, v): &(&str, &str)| k.len() + 1 + v.len();
    let joined_len = |members: &[(&str, &str)]| members.iter().map(member_len).sum::<usize>() + members.len().saturating_sub(1);
    while joined_len(members) > MAX_TRACESTATE_LEN {
        match members.iter().rposition(|m| member_len(m) > LONG_MEMBER) {
            Some(long) => members.remove(long),
            None => members.pop().expect("a list over 512 characters has members"),
        };
    }
}

fn key_char(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-' | b'*' | b'/')
}

/// `simple-key` or `tenant-id "@" system-id`.
fn valid_key(key: &str) -> bool {
    let all = |s: &str| s.bytes().all(key_char);
    match key.split_once('@') {
        None => key.len() <= 256 && key.as_bytes().first().is_some_and(u8::is_ascii_lowercase) && all(key),
        Some((tenant, system)) => {
            (1..=241).contains(&tenant.len())
                && tenant.as_bytes()[0].is_ascii_alphanumeric()
                && !tenant.as_bytes()[0].is_ascii_uppercase()
                && all(tenant)
                && (1..=14).contains(&system.len())
                && system.as_bytes()[0].is_ascii_lowercase()
                && all(system)
        }
    }
}

/// `0*255(chr) nblk-chr`: printable ASCII but `,` and `=`, spaces only
/// inside.
fn valid_value(value: &str) -> bool {
    let printable = |c: u8| (0x20..=0x7e).contains(&c) && c != b',' && c != b'=';
    (1..=256).contains(&value.len()) && value.bytes().all(printable) && !value.ends_with(' ')
}

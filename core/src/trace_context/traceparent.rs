//! The `traceparent` header: `VERSION-TRACEID-PARENTID-FLAGS`, in lowercase
//! hex, read and written as W3C Trace Context (Level 1, §3.2) has it.
//!
//! - Version `00`: exactly 55 characters.
//! - A later version (`01` to `fe`): read as `00` is, from its first 55
//!   characters, which must be followed by nothing or by a `-` (what a
//!   later version adds); of its flags only `sampled` is kept.
//! - Version `ff`, uppercase hex, a missing dash, a length that is not
//!   the version's, an all-zero trace id or parent id: refused, with the
//!   reason ([`TraceparentError`]). Input over [`MAX_TRACEPARENT_LEN`]
//!   bytes is refused before anything else is read.
//!
//! What is written is always version `00`.

use std::fmt;

/// The length of a version-`00` `traceparent`.
pub const TRACEPARENT_LEN: usize = 55;

/// The longest `traceparent` read at all (a later version may add
/// fields): what HTTP servers commonly allow a header line.
pub const MAX_TRACEPARENT_LEN: usize = 512;

/// The `sampled` bit of the trace flags.
pub const SAMPLED: u8 = 0x01;

/// Why a `traceparent` was refused. A refused header starts a new trace;
/// it is never an error of the request that carried it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TraceparentError {
    /// Not 55 characters for version `00`; under 55 for a later one.
    Length,
    /// Over [`MAX_TRACEPARENT_LEN`] bytes.
    TooLong,
    /// The version is `ff`, or not two lowercase hex digits.
    Version,
    /// A dash is missing, or a field is not lowercase hex.
    Malformed,
    /// The trace id is all zeros.
    ZeroTraceId,
    /// The parent id is all zeros.
    ZeroParentId,
}

impl fmt::Display for TraceparentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TraceparentError::Length => "a traceparent of version 00 has 55 characters, and of a later version at least 55",
            TraceparentError::TooLong => "a traceparent over 512 bytes is not read",
            TraceparentError::Version => "the traceparent's version is ff or not two lowercase hex digits",
            TraceparentError::Malformed => "the traceparent is not VERSION-TRACEID-PARENTID-FLAGS in lowercase hex",
            TraceparentError::ZeroTraceId => "the traceparent's trace id is all zeros",
            TraceparentError::ZeroParentId => "the traceparent's parent id is all zeros",
        })
    }
}

impl std::error::Error for TraceparentError {}

/// The ids and flags of a `traceparent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Parsed {
    pub(super) trace_id: u128,
    pub(super) span_id: u64,
    pub(super) flags: u8,
}

/// Reads a `traceparent` header value.
pub(super) fn parse(s: &str) -> Result<Parsed, TraceparentError> {
    let b = s.as_bytes();
    if b.len() > MAX_TRACEPARENT_LEN {
        return Err(TraceparentError::TooLong);
    }
    if b.len() < TRACEPARENT_LEN {
        return Err(TraceparentError::Length);
    }
    let version = hex(&b[0..2]).ok_or(TraceparentError::Version)?;
    match version {
        0xff => return Err(TraceparentError::Version),
        0 if b.len() != TRACEPARENT_LEN => return Err(TraceparentError::Length),
        // What a later version adds comes after a dash.
        _ if b.len() > TRACEPARENT_LEN && b[TRACEPARENT_LEN] != b'-' => return Err(TraceparentError::Malformed),
        _ => {}
    }
    if b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
        return Err(TraceparentError::Malformed);
    }
    let trace_id = hex(&b[3..35]).ok_or(TraceparentError::Malformed)?;
    let span_id = hex(&b[36..52]).ok_or(TraceparentError::Malformed)?;
    let flags = hex(&b[53..55]).ok_or(TraceparentError::Malformed)?;
    if trace_id == 0 {
        return Err(TraceparentError::ZeroTraceId);
    }
    if span_id == 0 {
        return Err(TraceparentError::ZeroParentId);
    }
    // A later version's flags may mean more; only `sampled` is known.
    let flags = if version == 0 { flags } else { flags & u128::from(SAMPLED) };
    Ok(Parsed { trace_id, span_id: span_id as u64, flags: flags as u8 })
}

/// The number `digits` spell in lowercase hex (at most 32 of them).
fn hex(digits: &[u8]) -> Option<u128> {
    digits.iter().try_fold(0u128, |acc, &c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        Some(acc << 4 | u128::from(d))
    })
}

/// A `traceparent` header value, version `00`, written on the stack:
/// asking a span for it allocates nothing.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Traceparent([u8; TRACEPARENT_LEN]);

impl Traceparent {
    /// The header value of these ids and flags.
    pub fn new(trace_id: u128, span_id: u64, flags: u8) -> Traceparent {
        let mut out = [b'-'; TRACEPARENT_LEN];
        write_hex(&mut out[0..2], &[0]);
        write_hex(&mut out[3..35], &trace_id.to_be_bytes());
        write_hex(&mut out[36..52], &span_id.to_be_bytes());
        write_hex(&mut out[53..55], &[flags]);
        Traceparent(out)
    }

    /// The 55 characters.
    #[inline]
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits and dashes are ever written.
        std::str::from_utf8(&self.0).expect("a traceparent is ASCII")
    }
}

/// Writes `bytes` as lowercase hex into `out` (twice as long): a byte's
/// two digits at a time, from a table, as this is on a request's path.
#[inline]
fn write_hex(out: &mut [u8], bytes: &[u8]) {
    const PAIRS: [[u8; 2]; 256] = {
        let digits = b"0123456789abcdef";
        let mut pairs = [[0u8; 2]; 256];
        let mut i = 0;
        while i < 256 {
            pairs[i] = [digits[i >> 4], digits[i & 0xf]];
            i += 1;
        }
        pairs
    };
    for (pair, &byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&PAIRS[usize::from(byte)]);
    }
}

impl std::ops::Deref for Traceparent {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for Traceparent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Traceparent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Traceparent({:?})", self.as_str())
    }
}

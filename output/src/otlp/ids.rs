//! Trace and span ids derived from the recording itself, so exporting the
//! same recording twice gives the same ids (a re-upload replaces rather
//! than duplicates, and a test can name the ids it expects).
//!
//! The hash is XXH3, whose output is fixed by its specification, not by a
//! Rust release (std's `DefaultHasher` may change between releases).

use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

/// What makes a span unique within a recording: its process, its id (0
/// for a completed span, which has none), its thread, when it began, and
/// its name (two completed spans may share the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanKey<'a> {
    /// The process.
    pub pid: u32,
    /// The span id of a begin/end pair, 0 for a completed span.
    pub id: u64,
    /// The thread that began (or reported) it.
    pub tid: u32,
    /// When it began, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// Its name.
    pub name: &'a str,
}

impl SpanKey<'_> {
    fn bytes(&self, domain: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(domain.len() + 24 + self.name.len());
        b.extend_from_slice(domain);
        b.extend_from_slice(&self.pid.to_le_bytes());
        b.extend_from_slice(&self.id.to_le_bytes());
        b.extend_from_slice(&self.tid.to_le_bytes());
        b.extend_from_slice(&self.start_ns.to_le_bytes());
        b.extend_from_slice(self.name.as_bytes());
        b
    }

    /// The OTLP span id: 8 bytes, never all zero (OTLP reads that as
    /// "no span").
    pub fn span_id(&self) -> [u8; 8] {
        nonzero(xxh3_64(&self.bytes(b"usertrace span\0"))).to_be_bytes()
    }

    /// The OTLP trace id of the trace this span is the root of: 16 bytes,
    /// never all zero.
    pub fn trace_id(&self) -> [u8; 16] {
        let h = xxh3_128(&self.bytes(b"usertrace trace\0"));
        (if h == 0 { 1 } else { h }).to_be_bytes()
    }
}

fn nonzero(h: u64) -> u64 {
    if h == 0 {
        1
    } else {
        h
    }
}

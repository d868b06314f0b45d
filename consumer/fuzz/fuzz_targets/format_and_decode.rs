//! A tracefs `format` text and a raw tracepoint record, both arbitrary:
//! `EventFormat::parse` then `decode` (and printing every value) must
//! return values or typed errors, never panic.
//!
//! Input: a little-endian u16 giving the length of the format text, the
//! text (invalid UTF-8 replaced), then the raw record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace_consumer::{decode, EventFormat};

fuzz_target!(|data: &[u8]| {
    let Some((len, rest)) = data.split_first_chunk::<2>() else { return };
    let len = usize::from(u16::from_le_bytes(*len)).min(rest.len());
    let (text, raw) = rest.split_at(len);
    let text = String::from_utf8_lossy(text);
    let Ok(format) = EventFormat::parse("user_events", &text) else { return };
    let _ = format.full_name();
    if let Ok(values) = decode(&format, raw) {
        for (name, value) in values {
            let _ = format!("{name}={value}");
        }
    }
});

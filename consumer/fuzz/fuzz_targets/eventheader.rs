//! An arbitrary tracepoint name and EventHeader payload: `decode_eventheader`
//! (Microsoft's `tracepoint_decode` walking metadata and data written by
//! someone else) must return fields or a typed error, never panic, and an
//! event it decodes must print.
//!
//! Input: one byte giving the length of the tracepoint name (invalid UTF-8
//! replaced), the name, then the payload from `eventheader_flags` on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace_consumer::{decode_eventheader, is_eventheader, EventFormat};

/// The format every EventHeader tracepoint registers, whatever its name.
const FIELDS: &str = "ID: 1\nformat:\n\
\tfield:u8 eventheader_flags;\toffset:8;\tsize:1;\tsigned:0;\n\
\tfield:u8 version;\toffset:9;\tsize:1;\tsigned:0;\n\
\tfield:u16 id;\toffset:10;\tsize:2;\tsigned:0;\n\
\tfield:u16 tag;\toffset:12;\tsize:2;\tsigned:0;\n\
\tfield:u8 opcode;\toffset:14;\tsize:1;\tsigned:0;\n\
\tfield:u8 level;\toffset:15;\tsize:1;\tsigned:0;\n";

fuzz_target!(|data: &[u8]| {
    let Some((&len, rest)) = data.split_first() else { return };
    let len = usize::from(len).min(rest.len());
    let (name, payload) = rest.split_at(len);
    // A name with a newline would end the format's name line early.
    let name = String::from_utf8_lossy(name).replace(['\n', '\r'], "_");
    let Ok(format) = EventFormat::parse("user_events", &format!("name: {name}\n{FIELDS}")) else { return };
    assert!(is_eventheader(&format));
    let mut raw = vec![0u8; 8];
    raw.extend_from_slice(payload);
    if let Ok(fields) = decode_eventheader(&format, &raw) {
        for (name, value) in fields {
            let _ = format!("{name}={value}");
        }
    }
});

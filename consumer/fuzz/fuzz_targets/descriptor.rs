//! An arbitrary shared-memory descriptor: `parse_descriptor` must return an
//! event or a typed error, never panic; an event it accepts must be one
//! the producer could have declared, so `format_string` writes back the
//! very same text, and its tracefs format text must read back through
//! `EventFormat::parse` with every field of its own.
//!
//! Input: the descriptor as UTF-8 (other inputs are skipped: the recorder
//! refuses a descriptor that is not UTF-8 before it gets here).
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace::descriptor::{parse_descriptor, tracefs_format};
use usertrace::format_string;
use usertrace_consumer::EventFormat;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok((name, fields)) = parse_descriptor(text) else { return };
    let rebuilt = format_string(&name, &fields).expect("a parsed descriptor is a valid definition");
    assert_eq!(rebuilt, text, "parse_descriptor accepted what format_string does not write");
    let format = EventFormat::parse("user_events", &tracefs_format("user_events", &name, 1, &fields))
        .expect("tracefs_format's text parses");
    // Every field, `common_x` too: the parser once dropped a producer's
    // field of that name as the trace_entry's (this target's first finding).
    assert_eq!(format.fields.len(), fields.len());
});

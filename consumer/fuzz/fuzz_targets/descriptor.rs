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
    // The format parser drops fields named `common_*` as the trace_entry's
    // (the first finding of this target): a producer may name a field so,
    // and the kernel shows it, so that is the parser's limit, not ours.
    let own = fields.iter().filter(|f| !f.name.starts_with("common_")).count();
    assert_eq!(format.fields.len(), own);
});

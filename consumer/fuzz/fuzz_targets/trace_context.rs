//! Arbitrary `traceparent` and `tracestate` headers: the core's parsers
//! must answer, never panic. What `traceparent` accepts must write back as
//! the very same text (version 00) or as the same ids in version 00 (a
//! later version); what `tracestate` keeps must be within W3C's limits
//! and read back as itself.
//!
//! Input: the `traceparent` value, then optionally a newline and the
//! `tracestate` value, as UTF-8 (other inputs are skipped: the API takes
//! header values as `&str`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace::trace_context::{TraceContext, TraceState, MAX_TRACESTATE_LEN, MAX_TRACESTATE_MEMBERS};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (traceparent, tracestate) = text.split_once('\n').unwrap_or((text, ""));
    if let Ok(context) = TraceContext::from_traceparent(traceparent) {
        assert!(context.is_valid());
        let written = context.traceparent();
        if traceparent.starts_with("00") {
            assert_eq!(written.as_str(), traceparent, "version 00 reads back byte for byte");
        } else {
            assert_eq!(&written[3..52], &traceparent[3..52], "a later version keeps its ids");
        }
        assert_eq!(TraceContext::from_traceparent(&written), Ok(context));
    }
    if let Some(state) = TraceState::parse(tracestate) {
        assert!(state.as_str().len() <= MAX_TRACESTATE_LEN, "{state}");
        assert!(state.members().count() <= MAX_TRACESTATE_MEMBERS);
        assert_eq!(TraceState::parse(state.as_str()).as_ref(), Some(&state), "what is kept reads back as itself");
    }
});

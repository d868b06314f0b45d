// The fork test calls fork, pipe, read, write and waitpid.
#![allow(unsafe_code)]

use std::collections::{BTreeMap, HashMap, HashSet};

use super::*;

/// W3C's own example.
const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn parse(s: &str) -> Result<TraceContext, TraceparentError> {
    TraceContext::from_traceparent(s)
}

#[test]
fn the_w3c_example_reads_and_writes_back_byte_for_byte() {
    let c = parse(EXAMPLE).unwrap();
    assert_eq!(c.trace_id, 0x4bf92f3577b34da6a3ce929d0e0e4736);
    assert_eq!(c.span_id, 0x00f067aa0ba902b7);
    assert_eq!(c.flags, 0x01);
    assert!(c.is_sampled() && c.is_valid());
    assert_eq!(c.traceparent().as_str(), EXAMPLE);
    assert_eq!(c.traceparent().to_string(), EXAMPLE);
    assert_eq!(EXAMPLE.parse::<TraceContext>().unwrap(), c);
}

#[test]
fn ids_are_written_with_their_leading_zeros_in_lowercase() {
    let c = TraceContext::new(1, 0xab, 0).unwrap();
    assert_eq!(c.traceparent().as_str(), "00-00000000000000000000000000000001-00000000000000ab-00");
    let max = TraceContext::new(u128::MAX, u64::MAX, 0xff).unwrap();
    assert_eq!(&*max.traceparent(), "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-ff");
    assert_eq!(parse(&max.traceparent()).unwrap(), max);
}

#[test]
fn version_00_has_exactly_55_characters() {
    assert_eq!(parse(&EXAMPLE[..54]), Err(TraceparentError::Length));
    assert_eq!(parse(&format!("{EXAMPLE}-")), Err(TraceparentError::Length));
    assert_eq!(parse(&format!("{EXAMPLE}0")), Err(TraceparentError::Length));
    assert_eq!(parse(""), Err(TraceparentError::Length));
}

#[test]
fn uppercase_hex_is_refused_in_every_field() {
    assert_eq!(parse("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"), Err(TraceparentError::Malformed));
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01"), Err(TraceparentError::Malformed));
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A"), Err(TraceparentError::Malformed));
    assert_eq!(parse("0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), Err(TraceparentError::Version));
}

#[test]
fn bad_hex_and_missing_dashes_are_malformed() {
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01"), Err(TraceparentError::Malformed));
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01"), Err(TraceparentError::Malformed));
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x"), Err(TraceparentError::Malformed));
    assert_eq!(parse("00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), Err(TraceparentError::Malformed));
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01"), Err(TraceparentError::Malformed));
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01"), Err(TraceparentError::Malformed));
    assert_eq!(parse("00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), Err(TraceparentError::Malformed));
    assert_eq!(parse("zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), Err(TraceparentError::Version));
}

#[test]
fn all_zero_ids_are_refused() {
    assert_eq!(parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01"), Err(TraceparentError::ZeroTraceId));
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"), Err(TraceparentError::ZeroParentId));
    assert_eq!(TraceContext::new(0, 1, 1), None);
    assert_eq!(TraceContext::new(1, 0, 1), None);
}

#[test]
fn version_ff_is_invalid() {
    assert_eq!(parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), Err(TraceparentError::Version));
}

#[test]
fn a_later_version_is_read_from_its_first_55_characters_keeping_only_sampled() {
    let base = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09";
    let c = parse(base).unwrap();
    assert_eq!((c.trace_id, c.span_id, c.flags), (0x4bf92f3577b34da6a3ce929d0e0e4736, 0x00f067aa0ba902b7, 0x01));
    assert_eq!(parse(&format!("{base}-what-the-future-will-be-like")).unwrap(), c);
    assert_eq!(parse(&format!("{base}what")), Err(TraceparentError::Malformed), "more must follow a dash");
    assert_eq!(parse(&base[..54]), Err(TraceparentError::Length));
    // Written back as version 00.
    assert!(c.traceparent().starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
}

#[test]
fn version_00_keeps_its_flags_byte() {
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").unwrap().flags, 0);
    assert_eq!(parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03").unwrap().flags, 3);
}

#[test]
fn over_long_input_is_refused_before_it_is_read() {
    let long = format!("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-{}", "a".repeat(MAX_TRACEPARENT_LEN));
    assert_eq!(parse(&long), Err(TraceparentError::TooLong));
    let just_fits = format!("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-{}", "a".repeat(MAX_TRACEPARENT_LEN - 56));
    assert_eq!(just_fits.len(), MAX_TRACEPARENT_LEN);
    assert!(parse(&just_fits).is_ok());
}

#[test]
fn any_text_is_an_answer_never_a_panic() {
    for s in ["é".repeat(28), "\0".repeat(55), "-".repeat(55), "0".repeat(55), format!("00-{}", "é".repeat(26)), "00".into()] {
        assert!(parse(&s).is_err(), "{s:?}");
    }
    // Every single-byte change of the example, at every position.
    for i in 0..EXAMPLE.len() {
        for c in [b'0', b'f', b'g', b'F', b'-', b' ', 0xc3] {
            let mut b = EXAMPLE.as_bytes().to_vec();
            b[i] = c;
            if let Ok(s) = std::str::from_utf8(&b) {
                let _ = parse(s);
            }
        }
    }
}

#[test]
fn errors_say_what_was_wrong() {
    assert!(TraceparentError::ZeroTraceId.to_string().contains("trace id is all zeros"));
    assert!(TraceparentError::Length.to_string().contains("55"));
}

#[test]
fn a_tracestate_is_kept_as_its_members_joined_by_commas() {
    let s = TraceState::parse("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE").unwrap();
    assert_eq!(s.as_str(), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    assert_eq!(s.members().collect::<Vec<_>>(), [("rojo", "00f067aa0ba902b7"), ("congo", "t61rcWkgMzE")]);
    assert_eq!(TraceState::parse(" a=1 ,\tb=2\t, ,,c=3 ").unwrap().as_str(), "a=1,b=2,c=3");
    assert_eq!(TraceState::parse("a=x y").unwrap().as_str(), "a=x y", "spaces inside a value are kept");
    assert_eq!(TraceState::parse("fw529a3039@dt=1,7tenant@sys_1-*/=v").unwrap().as_str(), "fw529a3039@dt=1,7tenant@sys_1-*/=v");
    assert_eq!(TraceState::parse(""), None);
    assert_eq!(TraceState::parse(" , ,"), None);
}

#[test]
fn an_invalid_tracestate_member_drops_the_whole_header() {
    for bad in [
        "a=1,B=2",
        "a=1,1a=2",
        "a=1,b",
        "a=1,b=",
        "a=1,b=x=y",
        "a=1,a=2",
        "a= ,b=1",
        "a=\u{7f}",
        "a=é",
        "tenant@=1",
        "@sys=1",
        "tenant@Sys=1",
        "tenant@s23456789012345=1",
        "Tenant@sys=1",
    ] {
        assert_eq!(TraceState::parse(bad), None, "{bad:?}");
    }
    assert_eq!(TraceState::parse(&format!("{}=1", "k".repeat(257))), None);
    assert!(TraceState::parse(&format!("{}=1", "k".repeat(256))).is_some());
    assert_eq!(TraceState::parse(&format!("a={}", "v".repeat(257))), None);
    assert_eq!(TraceState::parse(&format!("{}@s=1", "t".repeat(242))), None);
}

#[test]
fn a_tracestate_has_at_most_32_members() {
    let members = |n: usize| (0..n).map(|i| format!("k{i}=v")).collect::<Vec<_>>().join(",");
    assert_eq!(TraceState::parse(&members(32)).unwrap().members().count(), 32);
    assert_eq!(TraceState::parse(&members(33)), None);
}

#[test]
fn a_tracestate_over_512_characters_loses_long_members_first_then_the_last() {
    let long = format!("long={}", "x".repeat(200));
    let short: Vec<String> = (0..20).map(|i| format!("k{i:02}={}", "y".repeat(16))).collect(); // 20 bytes each
    let header = format!("{},{long},{}", short[..10].join(","), short[10..].join(","));
    let kept = TraceState::parse(&header).unwrap();
    assert!(!kept.as_str().contains("long="), "the long member goes first");
    assert_eq!(kept.members().count(), 20);
    // Without a long member: from the end.
    let many: Vec<String> = (0..30).map(|i| format!("k{i:02}={}", "y".repeat(26))).collect(); // 30 bytes each
    let kept = TraceState::parse(&many.join(",")).unwrap();
    assert!(kept.as_str().len() <= MAX_TRACESTATE_LEN);
    assert_eq!(kept.members().count(), 16, "16 * 30 + 15 commas = 495; 17 would be 526");
    assert!(kept.as_str().starts_with("k00=") && kept.as_str().ends_with(&many[15]));
    assert_eq!(TraceState::parse(&"a=1,".repeat(MAX_TRACESTATE_INPUT)), None, "over-long input is not read");
}

#[test]
fn headers_are_extracted_whatever_their_case_and_whitespace() {
    let mut headers: HashMap<String, String> = HashMap::new();
    headers.insert("TraceParent".into(), format!(" {EXAMPLE}\t"));
    headers.insert("tracestate".into(), "rojo=1".into());
    let c = TraceContext::extract(&headers).unwrap();
    assert_eq!(c.traceparent().as_str(), EXAMPLE);
    assert_eq!(c.tracestate.as_ref().map(TraceState::as_str), Some("rojo=1"));
    let list = vec![("content-type", "text/plain"), ("TRACEPARENT", EXAMPLE)];
    assert_eq!(TraceContext::extract(&list).unwrap().tracestate, None);
    assert_eq!(TraceContext::extract(list.as_slice()).unwrap().span_id, 0x00f067aa0ba902b7);
    let none: BTreeMap<String, String> = BTreeMap::new();
    assert_eq!(TraceContext::extract(&none), None);
}

#[test]
fn a_bad_traceparent_extracts_nothing_and_its_tracestate_with_it() {
    let headers: HashMap<String, String> =
        [("traceparent".into(), "00-00000000000000000000000000000000-00f067aa0ba902b7-01".into()), ("tracestate".into(), "a=1".into())].into();
    assert_eq!(TraceContext::extract(&headers), None);
}

#[test]
fn inject_writes_both_headers_and_extract_reads_them_back() {
    let c = TraceContext::from_traceparent(EXAMPLE).unwrap().with_tracestate("a=1,b=2");
    let mut headers: BTreeMap<String, String> = [("Traceparent".to_owned(), "old".to_owned())].into();
    c.inject(&mut headers);
    assert_eq!(headers.len(), 2, "{headers:?}: the old header, in another case, is replaced");
    assert_eq!(headers["traceparent"], EXAMPLE);
    assert_eq!(headers["tracestate"], "a=1,b=2");
    assert_eq!(TraceContext::extract(&headers), Some(c.clone()));
    let mut list: Vec<(String, String)> = Vec::new();
    c.inject(&mut list);
    assert_eq!(list.len(), 2);
    let mut nothing: HashMap<String, String> = HashMap::new();
    TraceContext { trace_id: 0, ..c }.inject(&mut nothing);
    assert!(nothing.is_empty(), "an invalid context writes nothing");
}

#[test]
fn a_child_keeps_its_parents_trace_flags_and_tracestate_with_a_new_span_id() {
    let parent = TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").unwrap().with_tracestate("a=1");
    let child = TraceContext::child_of(Some(&parent));
    assert_eq!((child.trace_id, child.flags, child.tracestate.clone()), (parent.trace_id, 0, parent.tracestate.clone()));
    assert_ne!(child.span_id, parent.span_id);
    let root = TraceContext::child_of(None);
    assert!(root.is_valid() && root.is_sampled() && root.tracestate.is_none());
    assert_ne!(root.trace_id, parent.trace_id);
    let invalid = TraceContext { span_id: 0, ..parent.clone() };
    assert_ne!(TraceContext::child_of(Some(&invalid)).trace_id, parent.trace_id, "an invalid parent is none");
}

#[test]
fn ids_are_nonzero_and_distinct_within_and_across_threads() {
    let draw = || (0..50_000).map(|_| (new_span_id(), new_trace_id())).collect::<Vec<_>>();
    let mut all: Vec<(u64, u128)> = std::thread::scope(|s| {
        let others: Vec<_> = (0..3).map(|_| s.spawn(draw)).collect();
        let mut mine = draw();
        for t in others {
            mine.extend(t.join().unwrap());
        }
        mine
    });
    assert!(all.iter().all(|&(s, t)| s != 0 && t != 0));
    let spans: HashSet<u64> = all.iter().map(|p| p.0).collect();
    let traces: HashSet<u128> = all.iter().map(|p| p.1).collect();
    assert_eq!((spans.len(), traces.len()), (all.len(), all.len()));
    // Both halves of a trace id are random.
    all.sort_unstable_by_key(|p| p.1);
    assert!(all.iter().any(|p| p.1 >> 64 != 0) && all.iter().any(|p| p.1 as u64 >= 1 << 63));
}

#[cfg(target_os = "linux")]
#[test]
fn a_fork_child_draws_other_ids_than_its_parent_draws_next() {
    let _ = new_span_id(); // this thread's generator, seeded before the fork
    let mut fds = [0; 2];
    // SAFETY: a pipe into a two-int array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child draws ids (thread-locals, one getrandom), writes
    // them to the pipe and _exits, touching no lock another thread holds.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let ids = [new_span_id().to_ne_bytes(), (new_trace_id() as u64).to_ne_bytes()].concat();
        // SAFETY: writes 16 bytes from a live buffer; then leaves at once.
        unsafe {
            libc::write(fds[1], ids.as_ptr().cast(), ids.len());
            libc::_exit(0);
        }
    }
    let parent = [new_span_id().to_ne_bytes(), (new_trace_id() as u64).to_ne_bytes()].concat();
    let mut child = [0u8; 16];
    // SAFETY: reads into a live 16-byte buffer; waits for our own child.
    unsafe {
        assert_eq!(libc::read(fds[0], child.as_mut_ptr().cast(), 16), 16);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert_ne!(child[..8], parent[..8], "the child's span id is the one its parent drew");
    assert_ne!(child[8..], parent[8..], "the child's trace id is the one its parent drew");
}

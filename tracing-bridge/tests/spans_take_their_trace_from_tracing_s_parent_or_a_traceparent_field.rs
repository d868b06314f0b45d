//! Each span the layer writes is begun in the trace of its `tracing`
//! parent (contextual or explicit, on any thread), or under the remote
//! parent its `traceparent` field gives; `context()` hands out the ids its
//! begin event carries. While nobody listens, a span with a `traceparent`
//! field passes that parent on, to itself and the spans inside it.
//!
//! Over shared memory (USERTRACE_TRANSPORT=shm), in a child process of
//! its own: the test plays the recorder, setting the enable words of the
//! registry's live slots and reading the rings, as the core's own
//! shared-memory tests do (their helpers, shared by path).

#[path = "../../core/tests/shm_support/mod.rs"]
mod shm_support;

use std::collections::BTreeMap;

use shm_support::{in_child, ring_paths, set_recorder, set_word, RegistryCopy, RingReader};
use tracing_subscriber::prelude::*;
use usertrace::TraceContext;

const REMOTE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The context each span of the scenario handed out, by name.
type Handed = BTreeMap<&'static str, Option<TraceContext>>;

/// The scenario, the same callsites each time it runs.
fn scenario() -> Handed {
    let mut handed = Handed::new();
    let root = tracing::info_span!("root", n = 1u64);
    let entered = root.enter();
    let child = tracing::info_span!("child", n = 2u64);
    let detached = tracing::info_span!(parent: None, "detached", n = 3u64);
    let incoming = tracing::info_span!(parent: None, "incoming", traceparent = REMOTE, tracestate = "a=1", n = 4u64);
    let handler = tracing::info_span!(parent: &incoming, "handler", n = 5u64);
    let worker = std::thread::scope(|s| {
        s.spawn(|| {
            let worker = tracing::info_span!(parent: &child, "worker", n = 6u64);
            usertrace_tracing::context(&worker)
        })
        .join()
        .unwrap()
    });
    let bad = tracing::info_span!(parent: None, "bad_header", traceparent = "00-00000000000000000000000000000000-00f067aa0ba902b7-01");
    for (name, span) in [("root", &root), ("child", &child), ("detached", &detached), ("incoming", &incoming), ("handler", &handler), ("bad_header", &bad)] {
        handed.insert(name, usertrace_tracing::context(span));
    }
    handed.insert("worker", worker);
    assert_eq!(
        usertrace_tracing::traceparent(&child).map(|t| t.to_string()),
        handed["child"].as_ref().map(|c| c.traceparent().to_string())
    );
    drop(entered);
    handed
}

/// Each begin written so far: (event name, id, trace id, parent id).
fn begins() -> Vec<(String, u64, u128, u64)> {
    let pid = std::process::id();
    let registry = RegistryCopy::read(pid);
    let names: BTreeMap<usize, String> =
        registry.live().into_iter().map(|(i, s)| (i, s.descriptor.split(' ').next().unwrap().to_owned())).collect();
    let u64_at = |p: &[u8], i: usize| u64::from_ne_bytes(p[i * 8..i * 8 + 8].try_into().unwrap());
    let mut out = Vec::new();
    for path in ring_paths(pid) {
        for r in RingReader::open(&path).drain() {
            let name = names[&(r.header.slot as usize)].clone();
            if !name.ends_with("span_end") {
                let p = &r.payload;
                out.push((name, u64_at(p, 0), u128::from(u64_at(p, 1)) << 64 | u128::from(u64_at(p, 2)), u64_at(p, 3)));
            }
        }
    }
    out
}

/// As a recorder: holds the registry (so that an exited thread's ring
/// stays to be read) and listens to every tracepoint.
fn enable_every_live_slot() {
    let pid = std::process::id();
    set_recorder(pid, pid);
    for (_, slot) in RegistryCopy::read(pid).live() {
        set_word(slot.enable_address as usize as *const u32, 1);
    }
}

#[test]
fn spans_write_the_trace_of_their_parent_and_hand_it_out() {
    let name = "spans_write_the_trace_of_their_parent_and_hand_it_out";
    if !in_child(name, &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    let provider = usertrace::Provider::new("ut_brctx").unwrap();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(usertrace_tracing::layer_for(provider))).unwrap();
    // The first records register the callsites; then a recorder listens.
    scenario();
    enable_every_live_slot();
    let handed = scenario();
    let ctx = |n: &str| handed[n].clone().unwrap_or_else(|| panic!("{n} handed out nothing: {handed:#?}"));
    let written: BTreeMap<String, (u64, u128, u64)> = begins().into_iter().map(|(n, id, t, p)| (n, (id, t, p))).collect();
    let begin = |n: &str| *written.get(&format!("ut_brctx_{n}")).unwrap_or_else(|| panic!("no begin of {n}: {written:#?}"));
    let remote = TraceContext::from_traceparent(REMOTE).unwrap();

    let (root, child, detached, incoming, handler, worker) =
        (ctx("root"), ctx("child"), ctx("detached"), ctx("incoming"), ctx("handler"), ctx("worker"));
    assert_eq!(begin("root"), (root.span_id, root.trace_id, 0), "a root: a new trace");
    assert_eq!(begin("child"), (child.span_id, root.trace_id, root.span_id), "the contextual parent");
    assert_eq!(begin("detached"), (detached.span_id, detached.trace_id, 0), "parent: None is a root");
    assert_ne!(detached.trace_id, root.trace_id);
    assert_eq!(begin("incoming"), (incoming.span_id, remote.trace_id, remote.span_id), "the traceparent field");
    assert_eq!(incoming.tracestate.as_ref().map(|t| t.as_str()), Some("a=1"));
    assert_eq!(begin("handler"), (handler.span_id, remote.trace_id, incoming.span_id), "an explicit parent");
    assert_eq!(handler.tracestate, incoming.tracestate, "carried on");
    assert_eq!(begin("worker"), (worker.span_id, root.trace_id, child.span_id), "an explicit parent on another thread");
    let bad = ctx("bad_header");
    assert_eq!(begin("bad_header"), (bad.span_id, bad.trace_id, 0), "a bad header is no parent: a new trace");
    // The context fields are read, not written.
    let incoming_slot = RegistryCopy::read(std::process::id()).live().into_iter().find(|(_, s)| s.descriptor.starts_with("ut_brctx_incoming "));
    let descriptor = incoming_slot.unwrap().1.descriptor;
    assert_eq!(descriptor, "ut_brctx_incoming u64 span_begin;u64 trace_id_hi;u64 trace_id_lo;u64 parent_span_id;__rel_loc char[] level;u64 n");
    // No recorder now: the files go at exit.
    set_recorder(std::process::id(), 0);
}

#[test]
fn while_nobody_listens_a_traceparent_field_is_passed_on() {
    let name = "while_nobody_listens_a_traceparent_field_is_passed_on";
    if !in_child(name, &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    let provider = usertrace::Provider::new("ut_brpass").unwrap();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(usertrace_tracing::layer_for(provider))).unwrap();
    let remote = TraceContext::from_traceparent(REMOTE).unwrap();
    for _ in 0..2 {
        let incoming = tracing::info_span!("incoming", traceparent = REMOTE, n = 1u64);
        let inner = tracing::info_span!(parent: &incoming, "inner");
        assert_eq!(usertrace_tracing::context(&incoming), Some(remote.clone()));
        assert_eq!(usertrace_tracing::context(&inner), Some(remote.clone()), "passed on by the span inside");
        assert_eq!(usertrace_tracing::traceparent(&inner).unwrap().as_str(), REMOTE);
        let alone = tracing::info_span!("alone");
        assert_eq!(usertrace_tracing::context(&alone), None);
    }
    assert!(begins().is_empty(), "nothing was written");
}

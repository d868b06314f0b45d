//! With USERTRACE_TRANSPORT=shm and the enable words set (as a recorder
//! would set them), each span's begin event carries its W3C ids after its
//! own id: a root a new trace and no parent, a span begun inside another
//! on its thread that one's trace and id, a span begun under a remote
//! parent that parent's trace and id, and a span begun after its
//! thread's spans ended (one of them on another thread) a trace of its
//! own. A span nobody listens to passes its parent on to the spans begun
//! inside it, and the ids each span hands out are the ones it wrote.

mod shm_support;

use shm_support::{in_child, ring_paths, set_word, RingReader};
use usertrace::TraceContext;

mod events {
    usertrace::tracepoints! {
        provider utctx;
        pub span request(n: u32);
        pub span query(n: u32);
        pub span handoff(n: u32);
    }
}

/// A begin event's id, trace id, parent id and `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Begin {
    id: u64,
    trace_id: u128,
    parent: u64,
    n: u32,
}

fn u64_at(p: &[u8], i: usize) -> u64 {
    u64::from_ne_bytes(p[i * 8..i * 8 + 8].try_into().unwrap())
}

/// The begins written so far, in order, from every ring of this process.
fn begins() -> Vec<Begin> {
    let mut out = Vec::new();
    for path in ring_paths(std::process::id()) {
        for r in RingReader::open(&path).drain() {
            if r.payload.len() == 4 * 8 + 4 {
                let p = &r.payload;
                let trace_id = u128::from(u64_at(p, 1)) << 64 | u128::from(u64_at(p, 2));
                let n = u32::from_ne_bytes(p[32..36].try_into().unwrap());
                out.push(Begin { id: u64_at(p, 0), trace_id, parent: u64_at(p, 3), n });
            }
        }
    }
    out
}

fn enable(on: bool) {
    for tp in [&events::request::TRACEPOINT, &events::query::TRACEPOINT, &events::handoff::TRACEPOINT, &events::SPAN_END] {
        set_word(tp.enable_word(), u32::from(on));
    }
}

#[test]
fn spans_write_their_trace_context_and_hand_out_what_they_wrote() {
    if !in_child("spans_write_their_trace_context_and_hand_out_what_they_wrote", &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    events::PROVIDER.register().unwrap();
    enable(true);

    // A root, and a span begun inside it.
    let (root, child) = {
        let root = usertrace::span!(events::request(1)).unwrap();
        let child = usertrace::span!(events::query(2)).unwrap();
        assert_eq!(usertrace::span::current(), child.context());
        (root.context().unwrap(), child.context().unwrap())
    };
    let got = begins();
    assert_eq!(got, [
        Begin { id: root.span_id, trace_id: root.trace_id, parent: 0, n: 1 },
        Begin { id: child.span_id, trace_id: root.trace_id, parent: root.span_id, n: 2 },
    ]);
    assert_eq!(usertrace::span::current(), None, "both ended");

    // Under a remote parent: its trace, its id as the parent; what the
    // span hands on is its own.
    let remote = TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
    let handed = {
        let span = usertrace::span!(events::request(3), parent = Some(&remote)).unwrap();
        let traceparent = span.traceparent().unwrap();
        assert_eq!(traceparent.as_str(), format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{:016x}-01", span.id()));
        span.context().unwrap()
    };
    assert_eq!(begins(), [Begin { id: handed.span_id, trace_id: remote.trace_id, parent: remote.span_id, n: 3 }]);

    // Ended on another thread: no longer the parent of what begins next.
    let request = usertrace::span!(events::request(4)).unwrap();
    let handoff = usertrace::span!(events::handoff(5)).unwrap();
    std::thread::spawn(move || drop(handoff)).join().unwrap();
    let inside = usertrace::span!(events::query(6)).unwrap();
    let (request_ctx, inside_ctx) = (request.context().unwrap(), inside.context().unwrap());
    drop((inside, request));
    let after = usertrace::span!(events::query(7)).unwrap().context().unwrap();
    let got = begins();
    assert_eq!(got[2], Begin { id: inside_ctx.span_id, trace_id: request_ctx.trace_id, parent: request_ctx.span_id, n: 6 });
    assert_eq!(got[3], Begin { id: after.span_id, trace_id: after.trace_id, parent: 0, n: 7 });
    assert_ne!(after.trace_id, request_ctx.trace_id, "a new trace once the thread's spans ended");

    // Nobody listens to the request: it writes nothing, and the query
    // begun inside it is the remote parent's child.
    set_word(events::request::TRACEPOINT.enable_word(), 0);
    let request = usertrace::span!(events::request(8), parent = Some(&remote)).unwrap();
    assert!(!request.is_recording());
    assert_eq!(request.context(), Some(remote.clone()));
    let query = usertrace::span!(events::query(9)).unwrap().context().unwrap();
    drop(request);
    assert_eq!(begins(), [Begin { id: query.span_id, trace_id: remote.trace_id, parent: remote.span_id, n: 9 }]);
    enable(false);
}

//! What trace context costs a span, through the shared-memory transport
//! (this host has no user_events; `harness/bench` can run it in the
//! guest too), every row beside today's span from the same run (issue 43:
//! at most 1.1x):
//!
//! 1. today's span: its begin event (`span_begin`, then one `u32`) and its
//!    end, with an id from a per-thread counter, written as the core wrote
//!    them before spans carried a trace context;
//! 2. `span!` and its guard's drop: a root (a new trace id) whose begin
//!    carries its context;
//! 3. `span!(.., parent = Some(&remote))`: under a remote parent;
//! 4. 3, and `traceparent()` of the span for an outgoing request;
//! 5. 3, and `traceparent()` of the thread's current span
//!    (`usertrace::span::current()`), as code deeper in the request asks;
//! 6. today's span's events, its begin with the three trace fields added:
//!    their share alone;
//! 7. a disabled `span!` and its drop, beside today's (a guard of 16
//!    bytes) and two disabled checks.
//!
//! The recorder is played by the bench, as in `shm_emit.rs`: it sets the
//! enable words and, before each row's turn, moves the ring's tail to its
//! head. Rows take turns within each of 100 rounds; the best round of each
//! is printed. It also prints the bytes of each begin event's payload.
//! `cargo bench -p usertrace --bench trace_context`.

use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use usertrace::TraceContext;

#[path = "support/shm_ring.rs"]
#[allow(dead_code)]
mod shm_ring;

use shm_ring::ThisThreadsRing;

mod events {
    usertrace::tracepoints! {
        provider bench_ctx;
        /// Today's begin event, as the core wrote it: the id, then the span's own.
        pub fn today_begin(span_begin: u64, n: u32);
        /// Today's end event.
        pub fn today_end(span_end: u64);
        /// Today's begin with the trace context's three fields, for their share.
        pub fn fields_begin(span_begin: u64, trace_id_hi: u64, trace_id_lo: u64, parent_span_id: u64, n: u32);
        pub span work(n: u32);
        pub span disabled_work(n: u32);
    }
}

/// Today's span guard, as the core wrote it before spans carried a trace
/// context (`producer/span.rs` at the commit before issue 43's): the
/// enable check, an id from a per-thread counter put in front of the
/// span's values on the stack, the begin emit; at the drop, the end's.
mod today {
    use usertrace::span::with_leading_value;
    use usertrace::{Error, Tracepoint, Value};

    pub struct Span {
        id: u64,
        end: &'static Tracepoint,
    }

    /// Today's `span!` on a tracepoint nobody listens to.
    #[inline]
    pub fn begin_disabled(_n: u32) -> Span {
        let (begin, end) = (&super::events::disabled_work::TRACEPOINT, &super::events::today_end::TRACEPOINT);
        if begin.enabled() {
            unreachable!("nobody listens");
        }
        Span { id: 0, end }
    }

    #[inline]
    pub fn begin(next_id: &mut u64, n: u32) -> Result<Span, Error> {
        let (begin, end) = (&super::events::today_begin::TRACEPOINT, &super::events::today_end::TRACEPOINT);
        if !begin.enabled() {
            return Ok(Span { id: 0, end });
        }
        let id = *next_id;
        *next_id += 1;
        with_leading_value(Value::U64(id), &[Value::U32(n)], |all| begin.emit(all))?;
        Ok(Span { id, end })
    }

    impl Drop for Span {
        #[inline]
        fn drop(&mut self) {
            if self.id != 0 && self.end.enabled() {
                let end = self.end;
                let _ = with_leading_value(Value::U64(self.id), &[], |all| end.emit(all));
            }
        }
    }
}


const ROUNDS: usize = 100;
const CALLS: u32 = 10_000;

fn set(word: *const u32, on: bool) {
    // SAFETY: a registered static tracepoint's enable word: alive for the
    // program, aligned, and only accessed atomically.
    unsafe { AtomicU32::from_ptr(word.cast_mut()) }.store(u32::from(on), Ordering::Relaxed);
}

/// What each row times, one call of its loop.
#[derive(Clone, Copy)]
enum What {
    Today,
    Root,
    Remote,
    RemoteTraceparent,
    RemoteCurrentTraceparent,
    Fields,
    Disabled,
    TodayDisabled,
    Checks,
}

/// Best ns per call over the rounds.
struct Row {
    name: &'static str,
    what: What,
    best: f64,
}

fn row(name: &'static str, what: What) -> Row {
    Row { name, what, best: f64::INFINITY }
}

fn main() {
    // SAFETY: set before any other thread exists, and before the first
    // registration reads them.
    unsafe {
        std::env::set_var("USERTRACE_TRANSPORT", "shm");
        std::env::set_var("USERTRACE_SHM_RING_KIB", "4096");
    }
    events::PROVIDER.register().expect("registration through shared memory");
    let on = [&events::today_begin::TRACEPOINT, &events::today_end::TRACEPOINT, &events::work::TRACEPOINT, &events::SPAN_END, &events::fields_begin::TRACEPOINT];
    for tp in on {
        set(tp.enable_word(), true);
    }
    set(events::disabled_work::TRACEPOINT.enable_word(), false);
    events::today_begin::emit(0, 0).expect("the first emit makes this thread's ring");
    let ring = ThisThreadsRing::open();
    let remote = TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();

    let mut rows = [
        row("today's span + drop (id, u32; end)", What::Today),
        row("span! + drop: a root, with its context", What::Root),
        row("span! under a remote parent + drop", What::Remote),
        row("the same + span.traceparent()", What::RemoteTraceparent),
        row("the same + current().traceparent()", What::RemoteCurrentTraceparent),
        row("today's begin with the 3 fields + end", What::Fields),
        row("disabled span! + drop", What::Disabled),
        row("today's disabled span + drop", What::TodayDisabled),
        row("two disabled enabled() checks", What::Checks),
    ];
    let mut next_id = 1u64;
    for _ in 0..ROUNDS {
        for row in rows.iter_mut() {
            ring.take_all();
            let start = Instant::now();
            for n in 0..CALLS {
                match row.what {
                    What::Today => drop(today::begin(&mut next_id, black_box(n)).unwrap()),
                    What::Root => drop(usertrace::span!(events::work(black_box(n))).unwrap()),
                    What::Remote => drop(usertrace::span!(events::work(black_box(n)), parent = Some(black_box(&remote))).unwrap()),
                    What::RemoteTraceparent => {
                        let span = usertrace::span!(events::work(black_box(n)), parent = Some(black_box(&remote))).unwrap();
                        black_box(span.traceparent());
                    }
                    What::RemoteCurrentTraceparent => {
                        let _span = usertrace::span!(events::work(black_box(n)), parent = Some(black_box(&remote))).unwrap();
                        black_box(usertrace::span::current().map(|c| c.traceparent()));
                    }
                    What::Fields => {
                        let id = next_id;
                        next_id += 1;
                        events::fields_begin::emit(black_box(id), 1, 2, 3, black_box(n)).unwrap();
                        events::today_end::emit(id).unwrap();
                    }
                    What::Disabled => drop(usertrace::span!(events::disabled_work(black_box(n))).unwrap()),
                    What::TodayDisabled => drop(today::begin_disabled(black_box(n))),
                    What::Checks => {
                        black_box(events::disabled_work::enabled());
                        black_box(events::SPAN_END.enabled() && black_box(false));
                    }
                }
            }
            row.best = row.best.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        }
    }
    assert_eq!(ring.lost(), 0, "every span timed was written, none dropped for a full ring");
    let print = |r: &Row, base: &Row| {
        println!("{:<40} {:>7.1} ns   {:<36} {:>7.1} ns   ratio {:.3}", r.name, r.best, base.name, base.best, r.best / base.best);
    };
    for r in &rows[1..6] {
        print(r, &rows[0]);
    }
    print(&rows[6], &rows[7]);
    print(&rows[6], &rows[8]);
    let today_bytes = 8 + 4;
    let now_bytes = usertrace::span::BEGIN_LEADING_FIELDS * 8 + 4;
    let record = |payload: usize| usertrace::shm_layout::RecordHeader::len_for(payload);
    println!(
        "bytes per span begin (one u32 field): today {today_bytes} of payload ({} in the ring), with the trace context {now_bytes} ({} in the ring)",
        record(today_bytes),
        record(now_bytes)
    );
}

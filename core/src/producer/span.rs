//! Spans: a stretch of time with a name and fields, as native user_events.
//!
//! A span is not a new kind of kernel object. It is two ordinary events
//! linked by an id, so `perf script` and ftrace show spans as they show any
//! event, and a reader needs no side channel. Every language writes the
//! same shapes, built here:
//!
//! | event | first field(s) | meaning |
//! |-------|----------------|---------|
//! | `<provider>_<name>` | `u64 span_begin` | begins the span `<provider>_<name>`; its other fields are the span's fields; a `u64 span_parent` among them names its parent span explicitly |
//! | `<provider>_span_end` | `u64 span_end` | ends the span with this id |
//! | any | `u64 span_end`, then more | ends it too; the further fields (say, an error) are added to the span's |
//! | `<provider>_span_error` | `u64 span_end`, `error` string | ends the span with this id because of an error (an exception's type name) |
//! | `<provider>_<name>` | `u64 span_start_ns`, `u64 span_duration_ns` | a completed span, reported after the fact (a GC pause): start on CLOCK_MONOTONIC, length in ns |
//!
//! The kernel timestamps the begin and end events; the span lasts from one
//! to the other. A span id is nonzero and unique within its process, and
//! a program it execs starts from other ids (handed the id, it may end the
//! span its caller began). So a span may end on another thread, or in
//! another program of the same process, than the one that began it: the
//! id links them. Nesting needs no field: on one thread, a span
//! that begins inside another and ends before it is its child.
//!
//! While nobody listens, beginning a span is one load (the begin event's
//! enable word) and ending it is a test of the id, which stays 0.
//!
//! A language names its spans after functions (`Foo.bar`, `<lambda>`,
//! `Foo$Bar.<init>`), which are not event names; [`event_name_for`] maps
//! them, by one rule for every binding.

use std::borrow::Cow;
use std::cell::Cell;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::field::{Field, FieldType, MAX_FIELDS};
use super::tracepoint::Tracepoint;
use super::value::Value;
use crate::sys;
use crate::Error;

/// The first field of a span's begin event: the span's id.
pub const SPAN_BEGIN_FIELD: &str = "span_begin";
/// The first field of a span's end event: the id of the span it ends.
pub const SPAN_END_FIELD: &str = "span_end";
/// The event (under each provider) that ends its spans: `<provider>_span_end`.
pub const SPAN_END_EVENT: &str = "span_end";
/// The event (under each provider) that ends a span because of an error:
/// `<provider>_span_error`.
pub const SPAN_ERROR_EVENT: &str = "span_error";
/// The second field of `<provider>_span_error`: what went wrong, e.g. the
/// type name of the exception that left the span.
pub const SPAN_ERROR_FIELD: &str = "error";
/// A field of a begin event that names the span's parent explicitly: the id
/// of a span of the same process that began before it. It wins over
/// nesting, so that a span begun on a worker thread (or resumed on another,
/// as async code does) hangs under the request that queued it.
pub const SPAN_PARENT_FIELD: &str = "span_parent";
/// The first field of a completed span: its start, CLOCK_MONOTONIC ns.
pub const SPAN_START_NS_FIELD: &str = "span_start_ns";
/// The second field of a completed span: its length in ns.
pub const SPAN_DURATION_NS_FIELD: &str = "span_duration_ns";

/// The fields of every `<provider>_span_end` event.
pub static SPAN_END_FIELDS: [Field; 1] = [Field::new(SPAN_END_FIELD, FieldType::U64)];

/// The fields of every `<provider>_span_error` event.
pub static SPAN_ERROR_FIELDS: [Field; 2] =
    [Field::new(SPAN_END_FIELD, FieldType::U64), Field::new(SPAN_ERROR_FIELD, FieldType::Str)];

/// The event name (the part after `<provider>_`) of a span named `name`.
///
/// A valid event name is returned as it is. Otherwise each run of
/// characters outside `[A-Za-z0-9_]` becomes one `_`, and such a run at
/// either end is dropped: `Foo.bar` → `Foo_bar`, `outer.<locals>.inner` →
/// `outer_locals_inner`, `<lambda>` → `lambda`, `Foo$Bar.<init>` →
/// `Foo_Bar_init`, `héllo` → `h_llo`. Distinct names may share an event
/// (`a.b` and `a_b`); their spans then differ only by where they began.
/// A name with no letter, digit or `_` at all is an
/// [`InvalidName`](Error::InvalidName) error.
pub fn event_name_for(name: &str) -> Result<Cow<'_, str>, Error> {
    if super::field::is_valid_name(name) {
        return Ok(Cow::Borrowed(name));
    }
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if valid(c) {
            if in_run && !out.is_empty() {
                out.push('_');
            }
            in_run = false;
            out.push(c);
        } else {
            in_run = true;
        }
    }
    if out.is_empty() {
        return Err(Error::InvalidName { what: "span", name: name.to_owned() });
    }
    Ok(Cow::Owned(out))
}

/// The fields of a span's begin event: the id, then the span's own.
pub fn span_begin_fields(fields: Vec<Field>) -> Vec<Field> {
    let mut all = Vec::with_capacity(fields.len() + 1);
    all.push(Field::new(SPAN_BEGIN_FIELD, FieldType::U64));
    all.extend(fields);
    all
}

/// The fields of a completed span's event: start and length, then its own.
pub fn completed_span_fields(fields: Vec<Field>) -> Vec<Field> {
    let mut all = Vec::with_capacity(fields.len() + 2);
    all.push(Field::new(SPAN_START_NS_FIELD, FieldType::U64));
    all.push(Field::new(SPAN_DURATION_NS_FIELD, FieldType::U64));
    all.extend(fields);
    all
}

/// Ids are handed to threads in blocks, so taking one writes only the
/// thread's own counter: the shared one is touched once per block.
const ID_BLOCK: u64 = 1 << 16;

/// The next block's first id; 0 until the first block is taken, when it
/// is seeded from [`first_block`].
static NEXT_BLOCK: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// `(next, end)` of this thread's block; empty until its first span.
    static BLOCK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Where this program's ids start: a block chosen from the 16 random bytes
/// the kernel gives every exec (`AT_RANDOM`), so that a program exec'd by
/// a process that still has spans open (a wrapper handing its span to the
/// program it runs) does not hand out the same ids again. Readers key
/// spans by process and id, and the pid survives exec.
fn first_block() -> u64 {
    block_for(sys::exec_random().unwrap_or_else(process_random))
}

/// The first block of a program whose random bits are `bits`. The block
/// number has 32 random bits, so the ids stay below 2^49 and never reach 0.
fn block_for(bits: u32) -> u64 {
    (u64::from(bits) + 1) * ID_BLOCK
}

/// 32 random bits for a program without `AT_RANDOM` (every OS but Linux):
/// drawn once from the keys std seeds from the OS's random source for each
/// process (`RandomState`, HashMap's defence against collisions), and kept,
/// so that every call in the program agrees, as `AT_RANDOM` would.
fn process_random() -> u32 {
    static BITS: OnceLock<u32> = OnceLock::new();
    *BITS.get_or_init(fresh_random)
}

/// 32 bits from a new `RandomState`: random per process, and different
/// for each call within one.
fn fresh_random() -> u32 {
    RandomState::new().hash_one(0u8) as u32
}

/// The first id of a block no other thread of this program has.
fn take_block() -> u64 {
    // ATOMICS: Relaxed throughout: the counter orders nothing else, and
    // each block goes to exactly one thread by the RMW's atomicity. The
    // seed is set once, by whichever thread comes first.
    if NEXT_BLOCK.load(Ordering::Relaxed) == 0 {
        let _ = NEXT_BLOCK.compare_exchange(0, first_block(), Ordering::Relaxed, Ordering::Relaxed);
    }
    NEXT_BLOCK.fetch_add(ID_BLOCK, Ordering::Relaxed)
}

/// A new span id: nonzero and unique within this program, and (see
/// `first_block`) distinct from the ids of the program it exec'd from.
///
/// A forked child inherits the parent's counters, so parent and child may
/// hand out the same id; a reader keys spans by process and id, which
/// keeps them apart.
pub fn next_span_id() -> u64 {
    BLOCK.with(|block| {
        let (mut next, mut end) = block.get();
        if next == end {
            next = take_block();
            end = next + ID_BLOCK;
        }
        block.set((next + 1, end));
        next
    })
}

/// Calls `emit` with `first` followed by `rest`, built on the stack.
///
/// A binding begins a span with the id in front of the caller's values;
/// this puts it there without allocating.
pub fn with_leading_value<R>(
    first: Value<'_>,
    rest: &[Value<'_>],
    emit: impl FnOnce(&[Value<'_>]) -> Result<R, Error>,
) -> Result<R, Error> {
    fn on_stack<const N: usize, R>(
        first: Value<'_>,
        rest: &[Value<'_>],
        emit: impl FnOnce(&[Value<'_>]) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let mut all = [Value::U8(0); N];
        all[0] = first;
        all[1..=rest.len()].copy_from_slice(rest);
        emit(&all[..=rest.len()])
    }
    match rest.len() {
        0..=3 => on_stack::<4, R>(first, rest, emit),
        4..=7 => on_stack::<8, R>(first, rest, emit),
        8..=15 => on_stack::<16, R>(first, rest, emit),
        n if n < MAX_FIELDS => on_stack::<MAX_FIELDS, R>(first, rest, emit),
        // More values than any event can have fields: let the emit's own
        // count check name the event and the numbers.
        _ => emit(rest),
    }
}

/// Begins a span: while `enabled`, takes an id and has `write` emit it in
/// front of `values`; returns the id, or 0 (and writes nothing) otherwise.
/// Every kind of tracepoint begins spans through this one rule.
#[inline]
pub(crate) fn begin_with(
    enabled: bool,
    values: &[Value<'_>],
    write: impl FnOnce(&[Value<'_>]) -> Result<(), Error>,
) -> Result<u64, Error> {
    if !enabled {
        return Ok(0);
    }
    let id = next_span_id();
    with_leading_value(Value::U64(id), values, write)?;
    Ok(id)
}

/// Ends span `id`: while `enabled`, has `write` emit the id followed by
/// `values` (none for `span_end`, the error for `span_error`). Nothing for
/// id 0, the id of a span that was not begun.
#[inline]
pub(crate) fn end_with(
    id: u64,
    enabled: bool,
    values: &[Value<'_>],
    write: impl FnOnce(&[Value<'_>]) -> Result<(), Error>,
) -> Result<(), Error> {
    if id == 0 || !enabled {
        return Ok(());
    }
    with_leading_value(Value::U64(id), values, write)
}

/// An open span of a static tracepoint; dropping it ends the span.
///
/// Made by a `span` item of [`tracepoints!`](crate::tracepoints) through
/// [`span!`](crate::span!). It is `Send`: a span may end on another thread
/// than the one that began it.
#[must_use = "the span ends when this guard is dropped; bind it: `let _span = ...`"]
#[derive(Debug)]
pub struct Span {
    /// 0 when the span was not begun (nobody listened).
    id: u64,
    end: &'static Tracepoint,
}

impl Span {
    /// Begins a span on `begin`, whose first field is `span_begin`, with
    /// the span's own `values` after the id; `end` is the provider's
    /// `span_end` event. Does nothing, and returns an inert guard, while
    /// nobody listens to `begin`.
    #[inline]
    pub fn begin(begin: &'static Tracepoint, end: &'static Tracepoint, values: &[Value<'_>]) -> Result<Span, Error> {
        let id = begin_with(begin.enabled(), values, |all| begin.emit(all))?;
        Ok(Span { id, end })
    }

    /// A guard for a span that was not begun; dropping it emits nothing.
    #[inline]
    pub const fn inert(end: &'static Tracepoint) -> Span {
        Span { id: 0, end }
    }

    /// The span's id as its events carry it; 0 if it was not begun.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Ends the span now, reporting a failed write (dropping ignores it).
    pub fn end(mut self) -> Result<(), Error> {
        let id = std::mem::take(&mut self.id);
        end_span(self.end, id)
    }
}

impl Drop for Span {
    #[inline]
    fn drop(&mut self) {
        if self.id != 0 {
            // A drop cannot report; a write that failed after the begin
            // succeeded means the tracer went away, which loses nothing.
            let _ = end_span(self.end, self.id);
        }
    }
}

fn end_span(end: &'static Tracepoint, id: u64) -> Result<(), Error> {
    end_with(id, id != 0 && end.enabled(), &[], |all| end.emit(all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_nonzero_and_unique_across_threads() {
        let mut ids: Vec<u64> = (0..4)
            .map(|_| std::thread::spawn(|| (0..1000).map(|_| next_span_id()).collect::<Vec<_>>()))
            .flat_map(|t| t.join().unwrap())
            .collect();
        ids.extend((0..(ID_BLOCK + 5)).map(|_| next_span_id()));
        assert!(ids.iter().all(|&id| id != 0));
        let count = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), count, "an id was handed out twice");
    }

    #[test]
    fn a_program_starts_its_ids_at_a_block_drawn_from_its_exec_random_bytes() {
        let first = first_block();
        assert_eq!(first % ID_BLOCK, 0);
        assert!((ID_BLOCK..=(1 << 32) * ID_BLOCK).contains(&first));
        // The same bytes every call: one seed per program.
        assert_eq!(first_block(), first);
        let id = next_span_id();
        assert!(id >= first && id < 1 << 49, "{id} is taken from the seeded range");
    }

    #[test]
    fn the_first_block_is_nonzero_aligned_and_below_2_to_the_49_for_any_random_bits() {
        assert_eq!(block_for(0), ID_BLOCK);
        assert_eq!(block_for(u32::MAX), (1 << 32) * ID_BLOCK);
        assert!(block_for(u32::MAX) + ID_BLOCK <= 1 << 49);
        assert_eq!(block_for(0x1234_5678) % ID_BLOCK, 0);
    }

    #[test]
    fn without_exec_random_bytes_a_program_draws_its_block_once_from_std_s_random_keys() {
        // What every OS but Linux uses; callable, and so tested, on Linux too.
        let bits = process_random();
        assert_eq!(process_random(), bits, "one seed per program");
        // The source is random: two draws in a row differ (and two
        // programs' draws do, since std seeds each process from the OS).
        let draws: Vec<u32> = (0..4).map(|_| fresh_random()).collect();
        assert!(draws.windows(2).any(|w| w[0] != w[1]), "{draws:?}");
    }

    #[test]
    fn the_leading_value_comes_first_for_every_size() {
        for n in [0usize, 3, 4, 7, 8, 15, 16, 31] {
            let rest: Vec<Value> = (0..n).map(|i| Value::U32(i as u32)).collect();
            let seen = with_leading_value(Value::U64(99), &rest, |all| Ok(format!("{all:?}"))).unwrap();
            let expected: Vec<Value> = std::iter::once(Value::U64(99)).chain(rest.iter().copied()).collect();
            assert_eq!(seen, format!("{expected:?}"));
        }
    }

    #[test]
    fn span_names_map_to_event_names_by_one_rule() {
        let cases = [
            ("handle", "handle"),
            ("_private9", "_private9"),
            ("Foo.bar", "Foo_bar"),
            ("outer.<locals>.inner", "outer_locals_inner"),
            ("<lambda>", "lambda"),
            ("Foo$Bar.<init>", "Foo_Bar_init"),
            ("a_.b", "a__b"),
            ("my block", "my_block"),
            ("héllo", "h_llo"),
        ];
        for (name, event) in cases {
            assert_eq!(event_name_for(name).unwrap(), event, "{name}");
            assert!(super::super::field::is_valid_name(&event_name_for(name).unwrap()));
        }
        assert!(matches!(event_name_for("handle").unwrap(), Cow::Borrowed(_)));
        for nothing_valid in ["", "...", "<>", "é"] {
            let err = event_name_for(nothing_valid).unwrap_err();
            assert!(matches!(err, Error::InvalidName { what: "span", .. }), "{err}");
        }
    }

    #[test]
    fn span_fields_put_the_convention_first() {
        let f = span_begin_fields(vec![Field::new("path", FieldType::Str)]);
        assert_eq!(f[0].name, SPAN_BEGIN_FIELD);
        assert_eq!(f[1].name, "path");
        let c = completed_span_fields(vec![]);
        assert_eq!((c[0].name.as_ref(), c[1].name.as_ref()), (SPAN_START_NS_FIELD, SPAN_DURATION_NS_FIELD));
    }
}

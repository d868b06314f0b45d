//! The spans open on each thread, so that a span begun there without a
//! parent given is its innermost open span's child, in its trace: the
//! rule a reader applies to spans that say nothing of their trace
//! ("the latest-begun span still open on its thread"), applied by the
//! producer, which can then write the ids and hand them on.
//!
//! Each thread has a table of [`DEPTH`] slots, a stack: a [`Span`] guard
//! takes the next slot when it begins and frees it when it ends. A span
//! may end on another thread than its own (the guard is `Send`), so the
//! freeing is one atomic store into the slot, from whatever thread; the
//! thread that owns the table is the only one to take slots, write their
//! ids, and read them. A freed slot under an open one stays until those
//! above it are freed too, and is skipped meanwhile.
//!
//! Tables are allocated once per thread and never freed, as a guard may
//! outlive the thread that began it: a thread that exits with all its
//! slots free hands its table to the next new thread; one that exits with
//! a span still open elsewhere leaves its table to that span's guard.
//!
//! A fork child does not inherit its parent's open spans (they are the
//! parent's, as the reader keys spans by process): a thread that finds the
//! fork epoch changed starts a new table.
//!
//! Beyond [`DEPTH`] nested spans a span is not tracked: it is written with
//! its ids, but the spans begun inside it have the slot below as parent.
//!
//! [`Span`]: super::Span

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

use super::Begun;
use crate::trace_context::{fork_epoch, TraceContext, TraceState};

/// How many spans a thread tracks at once.
pub(super) const DEPTH: usize = 32;

/// One open span's context. `span_id` 0: free.
struct Slot {
    span_id: AtomicU64,
    trace_hi: AtomicU64,
    trace_lo: AtomicU64,
    flags: AtomicU8,
}

/// A thread's slots.
struct Table {
    slots: [Slot; DEPTH],
}

impl Table {
    fn new() -> Table {
        Table {
            slots: std::array::from_fn(|_| Slot {
                span_id: AtomicU64::new(0),
                trace_hi: AtomicU64::new(0),
                trace_lo: AtomicU64::new(0),
                flags: AtomicU8::new(0),
            }),
        }
    }

    fn all_free(&self) -> bool {
        // ATOMICS: Acquire pairs with the Release of `Held::free`, so that
        // a table handed on is one no guard writes any more.
        self.slots.iter().all(|s| s.span_id.load(Ordering::Acquire) == 0)
    }
}

/// Tables whose threads exited with every slot free.
static SPARE: Mutex<Vec<&'static Table>> = Mutex::new(Vec::new());

/// The calling thread's view of its table.
struct Thread {
    table: Cell<Option<&'static Table>>,
    /// Slots in use from the bottom, some of them maybe freed since.
    len: Cell<usize>,
    /// The fork epoch the table was taken in.
    epoch: Cell<u32>,
    /// Each slot's `tracestate`, which only this thread reads.
    states: RefCell<[Option<TraceState>; DEPTH]>,
}

impl Drop for Thread {
    fn drop(&mut self) {
        if let Some(table) = self.table.get().filter(|t| t.all_free()) {
            if let Ok(mut spare) = SPARE.lock() {
                spare.push(table);
            }
        }
    }
}

thread_local! {
    static THREAD: Thread = const {
        Thread { table: Cell::new(None), len: Cell::new(0), epoch: Cell::new(0), states: RefCell::new([const { None }; DEPTH]) }
    };
}

/// A slot a guard holds; freed (by the guard) when its span ends.
#[derive(Debug)]
pub(super) struct Held {
    table: &'static Table,
    index: usize,
}

impl Held {
    /// Frees the slot, from any thread.
    #[inline]
    pub(super) fn free(self) {
        // ATOMICS: Release, so that the owner, or a thread that takes the
        // table over (`all_free`'s Acquire), sees the slot free after
        // anything this guard did with it.
        self.table.slots[self.index].span_id.store(0, Ordering::Release);
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Table")
    }
}

impl Thread {
    /// This thread's table in this process, taken (from a spare, or new)
    /// at the first call, and again in a fork child.
    #[inline]
    fn table(&self) -> &'static Table {
        let epoch = fork_epoch();
        match self.table.get() {
            Some(table) if self.epoch.get() == epoch => table,
            _ => self.take_table(epoch),
        }
    }

    #[cold]
    #[inline(never)]
    fn take_table(&self, epoch: u32) -> &'static Table {
        let spare = SPARE.lock().ok().and_then(|mut s| s.pop());
        let table = spare.unwrap_or_else(|| Box::leak(Box::new(Table::new())));
        self.table.set(Some(table));
        self.len.set(0);
        self.epoch.set(epoch);
        *self.states.borrow_mut() = [const { None }; DEPTH];
        table
    }

    /// Drops the freed slots from the top; the top is then the innermost
    /// open span, if any.
    #[inline]
    fn settle(&self, table: &Table) -> usize {
        let mut len = self.len.get();
        // ATOMICS: Relaxed: a slot freed on another thread just now may
        // still read as held, which is a span ending as this one begins.
        while len > 0 && table.slots[len - 1].span_id.load(Ordering::Relaxed) == 0 {
            len -= 1;
        }
        self.len.set(len);
        len
    }

    fn innermost(&self) -> Option<TraceContext> {
        self.innermost_in(self.table())
    }

    #[inline]
    fn innermost_in(&self, table: &Table) -> Option<TraceContext> {
        let top = self.settle(table).checked_sub(1)?;
        let slot = &table.slots[top];
        // ATOMICS: Relaxed: only this thread writes these.
        let trace_id = u128::from(slot.trace_hi.load(Ordering::Relaxed)) << 64 | u128::from(slot.trace_lo.load(Ordering::Relaxed));
        Some(TraceContext {
            trace_id,
            span_id: slot.span_id.load(Ordering::Relaxed),
            flags: slot.flags.load(Ordering::Relaxed),
            tracestate: self.states.borrow()[top].clone(),
        })
    }

    fn push(&self, context: &TraceContext) -> Option<Held> {
        self.push_in(self.table(), context)
    }

    #[inline]
    fn push_in(&self, table: &'static Table, context: &TraceContext) -> Option<Held> {
        let index = self.settle(table);
        let slot = table.slots.get(index)?;
        // ATOMICS: Relaxed: the owner reads them; the span id, stored
        // last, makes the slot held.
        slot.trace_hi.store((context.trace_id >> 64) as u64, Ordering::Relaxed);
        slot.trace_lo.store(context.trace_id as u64, Ordering::Relaxed);
        slot.flags.store(context.flags, Ordering::Relaxed);
        slot.span_id.store(context.span_id, Ordering::Relaxed);
        self.states.borrow_mut()[index].clone_from(&context.tracestate);
        self.len.set(index + 1);
        Some(Held { table, index })
    }
}

/// The context of the innermost span open on this thread (begun here by
/// a guard and not yet ended, wherever it ends), if any.
#[inline]
pub(super) fn innermost() -> Option<TraceContext> {
    THREAD.try_with(Thread::innermost).ok().flatten()
}

/// Calls `begin` with the context of the innermost span open on this
/// thread, and makes the context it began (if any) the innermost until
/// the returned slot is freed: one visit to the thread's table.
#[inline]
pub(super) fn begin_under_innermost<E>(begin: impl FnOnce(Option<&TraceContext>) -> Result<Begun, E>) -> Result<(Begun, Option<Held>), E> {
    let mut begin = Some(begin);
    let visited = THREAD.try_with(|t| {
        let table = t.table();
        let parent = t.innermost_in(table);
        let begun = (begin.take().expect("called once"))(parent.as_ref())?;
        let held = begun.context.as_ref().and_then(|c| t.push_in(table, c));
        Ok((begun, held))
    });
    match (visited, begin) {
        (Ok(result), _) => result,
        // The thread is exiting: no table, no parent.
        (Err(_), Some(begin)) => Ok((begin(None)?, None)),
        (Err(_), None) => unreachable!("try_with fails before calling its closure"),
    }
}

/// Makes `context` (valid) the innermost open span of this thread until
/// the returned slot is freed; `None` if the table is full (or the thread
/// is exiting), and then nothing is tracked.
#[inline]
pub(super) fn push(context: &TraceContext) -> Option<Held> {
    THREAD.try_with(|t| t.push(context)).ok().flatten()
}

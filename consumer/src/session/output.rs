//! What a session yields: its [`Output`]s, the [`Event`]s among them,
//! and the [`Stats`] over the whole session.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::attach::Window;
use crate::decode::decode_each;
use crate::error::DecodeError;
use crate::eventheader::{decode_eventheader, is_eventheader, Field};
use crate::format::EventFormat;
use crate::namespaces::Namespaces;
use crate::processes::ProcessInfo;
use crate::symbolize::Frame;
/// One tracepoint hit, with who emitted it.
#[derive(Debug, Clone)]
pub struct Event {
    /// CLOCK_MONOTONIC nanoseconds.
    pub time_ns: u64,
    /// The CPU it was emitted on.
    pub cpu: u32,
    /// The emitting process, in the recorder's PID namespace.
    pub pid: u32,
    /// The emitting thread, in the same namespace.
    pub tid: u32,
    /// The thread's name when it emitted the event.
    pub comm: Arc<str>,
    /// The process's (main thread's) name at that time.
    pub process: Arc<str>,
    /// The thread's namespaces at that time, when the session records
    /// them ([`Session::records_namespaces`](super::Session::records_namespaces)).
    pub namespaces: Option<Arc<Namespaces>>,
    /// The tracepoint's layout, shared by all its events.
    pub format: Arc<EventFormat>,
    /// `trace_entry` + payload, as the format's offsets expect.
    pub raw: Box<[u8]>,
    /// The emitting thread's user stack, innermost frame first, named:
    /// empty unless the session records its event's stacks
    /// ([`SessionOptions::stacks`](crate::SessionOptions::stacks)).
    pub stack: Box<[Frame]>,
}

impl Event {
    /// The tracepoint's name, e.g. `myapp_request`.
    pub fn name(&self) -> &str {
        &self.format.name
    }

    /// The decoded fields, in declaration order. An EventHeader event's
    /// come from its payload's own metadata ([`decode_eventheader`]), so
    /// their names are owned, and their arrays and structs are nested values.
    pub fn fields(&self) -> Result<Vec<Field<'_>>, DecodeError> {
        if is_eventheader(&self.format) {
            return decode_eventheader(&self.format, &self.raw);
        }
        let mut fields = Vec::with_capacity(self.format.fields.len());
        decode_each(&self.format, &self.raw, |name, value| fields.push((Cow::Borrowed(name), value)))?;
        Ok(fields)
    }
}

/// What a session yields, in time order.
#[derive(Debug, Clone)]
pub enum Output {
    /// A tracepoint hit.
    Event(Event),
    /// The ring of `cpu` was full and `count` events were dropped; with
    /// `sideband`, task records were dropped instead, so names may be wrong;
    /// with `thread`, a producer thread's shared-memory ring was full.
    Lost {
        /// The CPU whose ring overflowed (for a shared-memory ring, the
        /// CPU its thread last wrote on).
        cpu: u32,
        /// When the kernel reported the loss: after the dropped records.
        time_ns: u64,
        /// How many records were dropped.
        count: u64,
        /// Whether they were task records rather than events.
        sideband: bool,
        /// The producer thread whose shared-memory ring was full, which
        /// its producer sizes (`USERTRACE_SHM_RING_KIB`), not the session;
        /// `None` for a perf ring.
        thread: Option<u32>,
    },
    /// A process that emitted events, by its full name: told before its
    /// first event, and again after each exec.
    Process {
        /// When it was read: the exec, or the first event.
        time_ns: u64,
        /// The process id.
        pid: u32,
        /// Its executable and command line, as far as `/proc` showed them.
        info: ProcessInfo,
    },
    /// A thread of a process that emitted events exited (`tid == pid`: the
    /// process itself).
    Exit {
        /// When it exited.
        time_ns: u64,
        /// Its process.
        pid: u32,
        /// The thread.
        tid: u32,
    },
    /// A process has tracepoints the session asked for, in shared memory,
    /// that it cannot record: another recorder holds them, or the kernel
    /// does not let this one write their enable words. Told once.
    NotRecorded(Box<crate::NotRecorded>),
    /// A tracepoint was attached (at start, or later when it appeared).
    Attached {
        /// The tracepoint's layout.
        format: Arc<EventFormat>,
        /// When it was attached.
        time_ns: u64,
        /// Whether events written while it was being attached may be lost.
        window: Window,
    },
}

/// Counters over the whole session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Events yielded.
    pub events: u64,
    /// Lost events per CPU, by CPU number.
    pub lost: Vec<(u32, u64)>,
    /// Lost sideband (task) records, all CPUs.
    pub lost_sideband: u64,
    /// Events lost in producers' shared-memory rings, all threads.
    pub lost_in_shared_memory: u64,
    /// Records that could not be parsed (should stay 0).
    pub malformed: u64,
    /// Events the recorder itself dropped, apart from what the rings lost:
    /// rounds its own thread could not take in time (see `drain.rs`).
    pub dropped: u64,
    /// Threads known from /proc and sideband.
    pub threads: usize,
    /// The events counted and not yielded, by name, when the session
    /// yields none (`SessionOptions::yield_events` off); they are in
    /// `events` too. Empty when events are yielded.
    pub counted: BTreeMap<String, u64>,
}

impl Stats {
    /// Events lost in the rings: the perf rings of every CPU and the
    /// producers' shared-memory rings (sideband losses and the recorder's
    /// own drops not included).
    pub fn lost_total(&self) -> u64 {
        self.lost.iter().map(|l| l.1).sum::<u64>() + self.lost_in_shared_memory
    }
}

//! What a session records, and how: [`SessionOptions`].

use std::path::PathBuf;
use std::time::Duration;

use crate::archive::ArchiveOptions;
use crate::flight::FlightOptions;
use crate::stack_scope::Stacks;
/// What to record and how.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// `[SYSTEM:]NAME` patterns with `*` and `?`.
    pub patterns: Vec<String>,
    /// Data pages per CPU ring; rounded up to a power of two.
    pub ring_pages: usize,
    /// Wait for exact names that do not exist yet, instead of failing.
    pub wait_for_exact: bool,
    /// How often tracefs is re-read for tracepoints registered later.
    pub rescan_interval: Duration,
    /// tracefs mount point; found like the producer does when `None`.
    pub tracefs: Option<PathBuf>,
    /// Record each task's namespaces where permitted (CAP_PERFMON); the
    /// session goes on without them when the kernel refuses.
    pub namespaces: bool,
    /// Also write every record the rings give into this perf.data file
    /// (see `archive`); finish it with [`Session::finish_archive`](super::Session::finish_archive).
    pub archive: Option<ArchiveOptions>,
    /// Keep the last seconds of records instead, as a flight recorder:
    /// [`Session::dump`](super::Session::dump) closes them into a [`FlightDump`](crate::flight::FlightDump), which
    /// [`Session::take_dumps`](super::Session::take_dumps) hands over. Takes the place of `archive`.
    pub flight: Option<FlightOptions>,
    /// Also record the scheduling (`sched_switch`, `sched_waking`,
    /// `sched_migrate_task`) of the threads of every process whose events
    /// are recorded, and of those given to [`Session::follow_scheduling`](super::Session::follow_scheduling)
    /// (see `sched_scope.rs` for how it is scoped and what it misses).
    pub sched: bool,
    /// Whether events are handed on as [`Output::Event`](crate::Output::Event).
    /// A recorder whose only sink is the archive, or a counter, sets it
    /// false: its events are then only counted ([`Stats::events`](crate::Stats::events),
    /// and by name in [`Stats::counted`](crate::Stats::counted)), and the
    /// session's thread neither copies, orders, names nor decodes them, so
    /// that it keeps up with the drain. Task records, losses and
    /// attachments are handed on either way.
    pub yield_events: bool,
    /// Which events also record the emitting thread's user stack (perf's
    /// `--call-graph fp`: walked by frame pointers, up to 127 frames,
    /// kernel frames left out), whose frames each [`Event::stack`](crate::Event::stack)
    /// then names. The scheduler's tracepoints (`sched`) and events from
    /// shared memory have none. Not with `flight`: [`Session::open`](super::Session::open)
    /// refuses it ([`Error::StacksWithFlight`](crate::Error::StacksWithFlight)).
    pub stacks: Stacks,
    /// Which containers' producers a root recorder reads over shared
    /// memory: every container on the host when empty (as `perf record
    /// -a` sees every process); else only processes that one of these
    /// selects. A process outside them is not read and its enable words
    /// are not written.
    pub containers: Vec<crate::ContainerSelector>,
    /// Hand a descriptor of the node's `user_events_data` to each producer
    /// in a selected container that waits for one (set to user_events,
    /// with no tracefs of its own): its events then come over user_events.
    /// Needs root and user_events here; does nothing otherwise.
    pub hand_off: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            patterns: Vec::new(),
            ring_pages: 256,
            wait_for_exact: false,
            rescan_interval: Duration::from_millis(100),
            tracefs: None,
            namespaces: true,
            archive: None,
            flight: None,
            sched: false,
            yield_events: true,
            stacks: Stacks::None,
            containers: Vec::new(),
            hand_off: true,
        }
    }
}

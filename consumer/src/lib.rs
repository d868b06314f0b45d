// The front page opens with the README (an example that doctests run),
// then says how the crate is laid out.
#![doc = include_str!("../README.md")]
//!
//! usertrace-consumer: record user_events with perf, in time order, each
//! event attributed to the thread and process that emitted it.
//!
//! The modules, in the order data flows through them:
//!
//! 1. **Choosing** what to record: `select` (tracefs events that `-e`
//!    patterns name), `format` (their field layouts), `attach` (enabling
//!    one on every CPU without losing its first events), `attach_requests`
//!    (the socket `record -- CMD`'s producers announce their events on),
//!    `sched_scope` and `stack_scope` (which threads get scheduler context,
//!    which tracepoints a stack), `containers` (which containers a
//!    recorder serves).
//! 2. **Sources**: `ring` (perf's mmap ring protocol, over `sys`'s
//!    perf_event_open) and `shm` (producers on a kernel without
//!    user_events: their registries and rings in each `/dev/shm`).
//! 3. **The round**: `drain`, the thread that owns both kinds of ring,
//!    reads them in rounds and hands each round's records on as the kernel
//!    wrote them; `bytes` reads integers out of them.
//! 4. **Keeping them**: `archive` (perf.data, perf's own format) and
//!    `flight` (the flight recorder's window of the last seconds).
//! 5. **Ordering and naming**: `order` (merging CPUs into one time order),
//!    `record` (one perf record), `threads`/`procfs`/`processes`/
//!    `namespaces` (who was who, when, in which container), `attribution`
//!    (who emitted each record), `mappings`/`symbolize` (naming a stack's
//!    frames).
//! 6. **Decoding**: `decode` (tracefs payloads) and `eventheader`
//!    (self-describing EventHeader payloads), into `output_records` (the
//!    neutral records every output takes, with the `output` feature).
//!
//! `session` puts them together: it opens the perf events and the shared
//! memory, starts the drain, and yields [`Event`]s in time order. `error`
//! types what can go wrong along the way.
//!
//! Start at [`Session`]; [`decode()`] and [`EventFormat`] also serve readers
//! of tracepoint payloads from elsewhere (a `perf record` file, tracefs).

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod archive;
mod attach;
mod attach_requests;
mod attribution;
mod bytes;
mod containers;
mod decode;
mod drain;
mod error;
mod flight;
mod eventheader;
mod format;
mod mappings;
mod namespaces;
mod order;
#[cfg(feature = "output")]
pub mod output_records;
mod procfs;
mod processes;
pub mod record;
mod ring;
mod sched_scope;
mod stack_scope;
mod select;
mod shm;
mod session;
mod symbolize;
mod sys;
mod threads;

pub use attach::Window;
pub use attach_requests::AttachRequests;
pub use containers::{ns_pids, pid_in_container, pod_uid, selected, ContainerIdentity, ContainerSelector, SelectorError};
pub use decode::{decode, find_field, FieldValue};
pub use error::{DecodeError, Error, EventHeaderError, FormatError, RecordError, RingError};
pub use eventheader::{decode_eventheader, is_eventheader, Field};
pub use flight::{DumpRequest, DumpSummary, FlightDump, FlightOptions, Switch};
pub use format::{EventFormat, FieldKind, FormatField};
pub use namespaces::Namespaces;
pub use order::Orderer;
pub use processes::ProcessInfo;
pub use ring::{published_ranges, RawRecord, Records};
pub use sched_scope::SCHED_PATTERNS;
pub use stack_scope::Stacks;
pub use select::{load, scan, Candidate};
pub use shm::{shared_tracepoints, NotRecorded, SharedListing, SharedTracepoint};
pub use usertrace::{glob, Pattern, PatternError, USER_SYSTEMS};
pub use session::{find_tracefs, Event, Output, Session, SessionOptions, Stats};
pub use symbolize::Frame;
pub use sys::monotonic_ns;
pub use threads::{Identity, ThreadTable};

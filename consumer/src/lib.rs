// The front page opens with the README (an example that doctests run),
// then says how the crate is laid out.
#![doc = include_str!("../README.md")]
//!
//! usertrace-consumer: record user_events with perf, in time order, each
//! event attributed to the thread and process that emitted it.
//!
//! Layers, bottom up: `sys` (perf syscalls) → `ring` (mmap protocol) →
//! `record` (one perf record) → `format`/`decode` (tracepoint payloads) →
//! `threads`/`procfs`/`namespaces` (who was who, when) → `mappings`/`symbolize`
//! (naming the frames of a recorded stack) → `order` (merging CPUs) →
//! `attach` (no loss when a tracepoint is first enabled) → `attribution`
//! (who emitted each record, in time order) → `session`; `archive` writes
//! and reads perf.data, the rings' records as perf keeps them.
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
pub use shm::{shared_tracepoints, NotRecorded, SharedTracepoint};
pub use usertrace::{glob, Pattern, PatternError, USER_SYSTEMS};
pub use session::{find_tracefs, Event, Output, Session, SessionOptions, Stats};
pub use symbolize::Frame;
pub use sys::monotonic_ns;
pub use threads::{Identity, ThreadTable};

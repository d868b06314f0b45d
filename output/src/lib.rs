// The front page opens with the README (an example that doctests run),
// then says how the crate is laid out.
#![doc = include_str!("../README.md")]
//!
//! usertrace recordings, written and read back: the neutral [`Record`]
//! model, the JSON-lines archive ([`jsonl`]), the [`timeline`] built from
//! records (processes, threads, spans, instants, losses), and the outputs
//! drawn from it: a Perfetto trace ([`perfetto`]), Chrome's Trace Event
//! JSON ([`chrome`]) and a latency [`report`].
//!
//! Every output is written through [`atomic_file`]: a regular file is
//! never left half-written; a device, a FIFO or `-` (standard output) is
//! written in place.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod atomic_file;
pub mod chrome;
pub mod jsonl;
pub mod otlp;
pub mod perfetto;
pub mod record;
pub mod report;
pub mod slow_span;
pub mod timeline;

pub use atomic_file::{check_writable, AtomicFile, FileError};
pub use record::{find_field, ClockRecord, EventRecord, ExitRecord, LostRecord, Namespaces, ProcessRecord, Record, StackFrame, Value, ValueRef};
pub use report::Report;
pub use slow_span::SlowSpan;
pub use timeline::Timeline;

#[cfg(test)]
mod test_records;

//! usertrace: Linux user_events tracepoints.
//!
//! A tracepoint costs one relaxed load while nobody listens. When ftrace,
//! perf or `usertrace record` attaches, the kernel flips a bit in this
//! process's memory, and each emit is one `writev` into the kernel's trace
//! buffers: no daemon, no uprobe trap, no allocation.
//!
//! Requires Linux 6.4+ with CONFIG_USER_EVENTS and write access to tracefs'
//! `user_events_data`; [`status()`] says why tracing is unavailable. Without
//! it every tracepoint stays disabled and emits do nothing.

pub mod abi;
pub mod consumer;
mod error;
pub mod handshake;
mod producer;
mod status;
pub mod sys;
pub mod tracefs;

pub use error::{Error, ErrorKind};
pub use producer::{
    delete_event, format_string, is_valid_name, registered_format, DynamicTracepoint, ExternalTracepoint, Field, FieldType, Provider,
    RegisterOptions, StaticProvider, ToValue, Tracepoint, Value, MAX_FIELDS,
};
pub use producer::{wait_for_emits, EmitScope};
pub use status::{status, Availability, Status};

#[doc(hidden)]
pub mod __private {
    pub use crate::producer::is_valid_name;
}

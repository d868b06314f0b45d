// The front page opens with the README (an example that doctests run),
// then says how the crate is laid out.
#![doc = include_str!("../README.md")]
//!
//! usertrace: Linux user_events tracepoints.
//!
//! A tracepoint costs one relaxed load while nobody listens. When ftrace,
//! perf or `usertrace record` attaches, the kernel flips a bit in this
//! process's memory, and each emit is one `writev` into the kernel's trace
//! buffers: no daemon, no uprobe trap, no allocation.
//!
//! Requires Linux 6.4+ with CONFIG_USER_EVENTS and write access to tracefs'
//! `user_events_data`; [`status()`] says why tracing is unavailable (reading
//! the kernel's build config, [`KernelConfig`], when tracefs alone cannot
//! tell), the same diagnosis in every language and in `usertrace status`. Without
//! it every tracepoint stays disabled and emits do nothing. On every other
//! OS the crate builds the same way and does just that: registration fails
//! with [`Error::Unavailable`], and [`status()`] says user_events are Linux
//! only.
//!
//! Where the kernel has no user_events (tracefs not mounted, or no
//! `user_events_data`), tracepoints register through shared memory
//! instead: a registry file and a ring per thread in `/dev/shm`, which a
//! recorder reads, with the same one-load disabled check.
//! `USERTRACE_TRANSPORT` (`auto`, `user_events`, `shm`) picks the
//! transport, and [`transport()`] says which one is in use and why.
//!
//! Events known when the program is built are declared with
//! [`tracepoints!`] and emitted with [`emit!`]; events defined at run time
//! come from a [`Provider`] as [`DynamicTracepoint`]s.
//!
//! This crate is the producer only: it links neither a perf ring reader nor
//! mmap helpers. Recording lives in the `usertrace-consumer` crate.

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod abi;
mod errno;
mod error;
mod eventheader_name;
mod field_path;
mod handshake;
mod kernel_config;
mod pattern;
mod producer;
pub mod resource;
mod sched_tracepoints;
mod status;
mod sys;
mod thread_name;
pub mod trace_context;
mod tracefs;
mod transport;
pub mod wire;
// The shared-memory transport's file layout, which the recorder reads too.
#[doc(hidden)]
pub mod shm_layout;
#[doc(hidden)]
pub mod descriptor;

pub use errno::Errno;
pub use eventheader_name::{eventheader_event_name, EventHeaderName, EVENTHEADER_EVENT_FIELD, EVENTHEADER_PROVIDER_FIELD};
pub use error::{Error, ErrorKind};
pub use field_path::find_field_by_path;
pub use handshake::{ATTACH_FD_ENV, ATTACH_PATTERNS_ENV};
pub use pattern::{glob, Pattern, PatternError, USER_SYSTEMS};
pub use producer::{
    delete_event, registered_format, validate_name, Definition, DynamicTracepoint, ExternalTracepoint, Field, FieldType, Provider,
    RegisterOptions, StaticProvider, ToValue, Tracepoint, Value, MAX_FIELDS, SHM_CLOCK_ENV, SHM_RING_KIB_ENV,
};
// What the C, Python and Java bindings build on, and the macros expand to:
// public so that they can, hidden because an application has no use for
// them (Definition and DynamicTracepoint check and count for it).
#[doc(hidden)]
pub use producer::{check_field_count, format_string, is_valid_name, wait_for_emits, EmitScope};
pub use producer::fit::fit_payload;
pub use producer::span::{self, Begun, Span};
pub use producer::otel_resource::{self, OtelResource, OtelResourceTracepoint};
pub use producer::otel_span::{self, OtelLog, OtelLogTracepoints, OtelSpan, OtelSpanTracepoints};
pub use sched_tracepoints::{SCHED_MIGRATE_TASK, SCHED_PATTERNS, SCHED_SWITCH, SCHED_SYSTEM, SCHED_TRACEPOINTS, SCHED_WAKING};
pub use kernel_config::{ConfigValue, KernelConfig};
pub use status::{status, Availability, Status};
pub use transport::{transport, Transport, TransportChoice, TRANSPORT_ENV};
pub use trace_context::{TraceContext, TraceState, Traceparent, TraceparentError};
pub use thread_name::{kernel_thread_name, set_current_thread_name, THREAD_NAME_MAX_BYTES};

#[doc(hidden)]
pub mod __private {
    pub use crate::producer::is_valid_name;
    /// The raw ABI and syscalls, for benchmarks that measure them as the
    /// baseline of our own calls. Not API: they change without notice.
    pub mod abi {
        pub use crate::abi::{UserReg, UserUnreg, DIAG_IOCSREG, DIAG_IOCSUNREG};
    }
    /// The producer's half of the `user_events_data` handoff (see
    /// `shm_layout`), for the recorder's tests of the protocol.
    #[cfg(target_os = "linux")]
    pub mod handoff {
        pub use crate::producer::handoff::{bind_listener, check_descriptor, receive_descriptor, Refusal};
    }
    /// See [`abi`].
    pub mod sys {
        pub use crate::sys::{open_read_write, register, unregister, writev};
    }
    /// The check, layout and `writev` of one event, to any descriptor: for
    /// a benchmark of what an emit does after the registration check,
    /// which needs no kernel when it writes to /dev/null. See [`abi`].
    pub mod payload {
        pub use crate::producer::payload::write_event;
    }
}

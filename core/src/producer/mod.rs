//! The producer half: declare tracepoints, register them, emit events.

mod data_file;
mod definition;
mod dynamic;
mod events;
mod external;
pub(crate) mod handoff;
pub(crate) mod fit;
pub(crate) mod field;
mod in_flight;
pub mod otel_resource;
pub mod otel_span;
pub(crate) mod macros;
pub(crate) mod payload;
mod provider;
mod registrar;
mod registration;
mod shm;
pub mod span;
mod tracepoint;
pub(crate) mod value;

pub use definition::{validate_name, Definition};
pub use dynamic::DynamicTracepoint;
pub use events::{delete_event, registered_format};
pub use external::ExternalTracepoint;
pub use in_flight::{wait_for_emits, EmitScope};
pub use field::{check_field_count, format_string, is_valid_name, Field, FieldType, MAX_FIELDS};
pub use provider::{Provider, StaticProvider};
pub use shm::{SHM_CLOCK_ENV, SHM_RING_KIB_ENV};
pub use tracepoint::{RegisterOptions, Tracepoint};
pub use value::{ToValue, Value};

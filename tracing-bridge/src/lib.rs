// The front page opens with the README (an example that doctests run),
// then says how the crate works.
#![doc = include_str!("../README.md")]
//!
//! # How it works
//!
//! [`layer()`] is a [`tracing_subscriber::Layer`] with a per-layer filter
//! ([`Listening`]): each callsite (one `info!`, one `info_span!`) gets its
//! own tracepoints, registered through the core's [`Provider`] and
//! [`DynamicTracepoint`](usertrace::DynamicTracepoint) at the callsite's
//! first record, and then written only while a tracer listens to them.
//!
//! - Names: [`naming`] (`<provider>_<span name>`, `<provider>_<event name>`,
//!   or `<provider>_<target>_<line>` for an unnamed event).
//! - Fields and their types, and what a record that does not fit its
//!   callsite's types becomes: [`record`].
//! - Which tracepoints a callsite has (events, span begins and ends):
//!   [`callsite`].
//! - The enable check: [`layer`](mod@layer).
//! - Each span's place in a W3C trace, from `tracing`'s own parent or a
//!   `traceparent` field, and the context to hand on: [`context`](mod@context).
//! - `log` records: [`log`](mod@log).
//!
//! Memory the kernel writes enable bits into stays valid until it is
//! unregistered: every tracepoint here is a core `DynamicTracepoint`, which
//! unregisters before its memory is freed. Dropping the layer unregisters
//! its tracepoints.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod callsite;
mod callsites;
pub mod context;
pub mod layer;
pub mod log;
pub mod naming;
pub mod record;

use tracing_core::Subscriber;
use tracing_subscriber::filter::Filtered;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer as _;
pub use usertrace::Provider;

pub use callsite::LEVEL_FIELD;
pub use context::{context, traceparent, TRACEPARENT_FIELD, TRACESTATE_FIELD};
pub use layer::{Emitter, Listening};
pub use naming::{default_provider, MAX_NAME};

/// The layer [`layer()`] and [`layer_for`] make: [`Emitter`] behind its own
/// filter, [`Listening`], so that it disables a callsite for itself only.
pub type UsertraceLayer<S> = Filtered<Emitter, Listening, S>;

/// The layer, with the program's name as provider ([`default_provider`]):
/// `tracing_subscriber::registry().with(usertrace_tracing::layer())`.
pub fn layer<S>() -> UsertraceLayer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let provider = Provider::new(default_provider()).expect("the default provider name is valid");
    layer_for(provider)
}

/// The layer, naming its tracepoints `<provider>_…` and registering them
/// with the provider's options.
///
/// ```
/// use tracing_subscriber::prelude::*;
///
/// let provider = usertrace::Provider::new("myapp")?;
/// let subscriber = tracing_subscriber::registry().with(usertrace_tracing::layer_for(provider));
/// tracing::subscriber::with_default(subscriber, || tracing::info!(id = 7u64, "served"));
/// # Ok::<(), usertrace::Error>(())
/// ```
pub fn layer_for<S>(provider: Provider) -> UsertraceLayer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let (emitter, listening) = layer::pair(provider);
    emitter.with_filter(listening)
}

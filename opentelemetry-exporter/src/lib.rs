//! OpenTelemetry's Rust SDK, exporting through usertrace.
//!
//! [`UsertraceSpanExporter`] writes each span of a batch as one usertrace
//! event (more, for a span too large for one), and
//! [`UsertraceLogExporter`] each log record, which carries the span as
//! the OTLP protobuf the SDK's own OTLP exporter would send; `usertrace
//! record --otlp` sends it on exactly. The event format is the core's
//! ([`usertrace::otel_span`]), the same that Python's
//! `usertrace.opentelemetry` writes.
//!
//! ```no_run
//! use opentelemetry_sdk::trace::SdkTracerProvider;
//! use usertrace_opentelemetry::UsertraceSpanExporter;
//!
//! let exporter = UsertraceSpanExporter::new("myapp").expect("usertrace registers its events");
//! // Spans are recorded only while a recorder listens (optional).
//! let sampler = exporter.sampler();
//! // A simple processor is enough: an export waits on no network.
//! let provider = SdkTracerProvider::builder().with_sampler(sampler).with_simple_exporter(exporter).build();
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod batch;
mod log_exporter;
mod resource;
mod sampler;
mod span_exporter;

pub use log_exporter::UsertraceLogExporter;
pub use sampler::UsertraceSampler;
pub use span_exporter::UsertraceSpanExporter;

//! The JNI half of the usertrace Java binding: the native methods of
//! `dev.usertrace.internal.Native`, each a few lines that convert values and
//! call the `usertrace` crate.
//!
//! Every export runs inside [`boundary`]: a Rust panic or error becomes a
//! Java exception and never unwinds into the JVM. Handles are `Box` pointers
//! passed to Java as `long`; Java owns them (see `Tracepoint.java`) and frees
//! each one exactly once, with `free0`.

// Unsafe is opt-in per module: `#[unsafe(no_mangle)]` exports, and handles.
#![deny(unsafe_code)]
// The crate's API is its exports; its Rust docs are for maintainers, who
// read them with `cargo doc --document-private-items`, where these links
// to private modules resolve.
#![allow(rustdoc::private_intra_doc_links)]

mod boundary;
mod otel_resource;
mod otel_span;
mod span;
mod status;
mod tables;
mod trace_context;
mod tracepoint;
mod transport;
mod values;

/// Bumped whenever a native signature or the value encoding changes, so a
/// jar never runs against a library built for another version of it.
pub const ABI_VERSION: i32 = 6;

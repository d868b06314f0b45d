//! libusertrace: the C API of usertrace.
//!
//! One module per C concept. Every export runs inside [`boundary::guard`],
//! so no panic unwinds into C, and returns a `usertrace_result`: 0, or a
//! code in the 7100 range (never an errno). The header
//! `include/usertrace.h` is generated from these modules by cbindgen
//! (`ffi-c/gen-header.sh`), with the C macros of `cbindgen.toml`'s trailer.
//!
//! # Safety
//! Every export takes raw pointers from C; each documents what it needs
//! (its `# Safety`) and checks for NULL. Unsafe code is denied here and
//! allowed per module, each saying what it relies on; every unsafe
//! operation has its own `unsafe { }` block, also inside an `unsafe fn`,
//! with a `// SAFETY:` line quoting the contract that makes it sound.

#![deny(unsafe_code)]
#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]
// The crate's API is its exports; its Rust docs are for maintainers, who
// read them with `cargo doc --document-private-items`, where these links
// to private modules resolve.
#![allow(rustdoc::private_intra_doc_links)]

mod boundary;
mod error;
mod event;
mod field;
mod provider;
mod span;
mod status;
mod trace_context;
mod tracepoint;
mod transport;
mod value;
mod version;

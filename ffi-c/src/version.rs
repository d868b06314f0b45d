//! `usertrace_version`: the version of the library a program runs with.
//!
//! The header's `USERTRACE_VERSION*` macros give the version a program was
//! compiled against; `gen-header.sh` writes them from the same crate
//! version that this export returns, so the two agree for one build, and
//! differ only when a program runs with another libusertrace than the
//! header it was compiled with.
//!
//! # Safety
//! The export is `#[no_mangle]`; it returns a pointer to static memory.
#![allow(unsafe_code)]

use std::ffi::{c_char, CStr};

/// The crate's version as cargo gives it (the workspace's), NUL-terminated.
const VERSION: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
    Ok(version) => version,
    Err(_) => panic!("CARGO_PKG_VERSION holds a NUL"),
};

/// This library's version, `"MAJOR.MINOR.PATCH"` (static, NUL-terminated,
/// never NULL): the `USERTRACE_VERSION` of the header it was built with,
/// which a program compiled against another header may not share.
#[no_mangle]
pub extern "C" fn usertrace_version() -> *const c_char {
    VERSION.as_ptr()
}

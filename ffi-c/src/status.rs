//! `usertrace_status`: whether user_events can be used, and why not.
//!
//! # Safety
//! The export is `#[no_mangle]` and writes its sentence into the caller's
//! buffer, under its contract.
#![allow(unsafe_code)]

use std::ffi::c_char;

use ut::Availability;

use crate::boundary;

/// The verdict of `usertrace_status` (the core's `Availability`).
pub type usertrace_availability = i32;
/// `user_events_data` is writable: tracepoints will register.
pub const USERTRACE_AVAILABLE: usertrace_availability = 0;
/// No tracefs mount point was found, and the kernel's build config does
/// not say it lacks user_events.
pub const USERTRACE_TRACEFS_NOT_MOUNTED: usertrace_availability = 1;
/// The kernel lacks user_events: its build config says CONFIG_USER_EVENTS
/// is not set (or it is older than 6.4), or tracefs has no
/// `user_events_data`.
pub const USERTRACE_USER_EVENTS_MISSING: usertrace_availability = 2;
/// This process may not open `user_events_data`.
pub const USERTRACE_PERMISSION_DENIED: usertrace_availability = 3;
/// Opening `user_events_data` failed for another reason.
pub const USERTRACE_OPEN_FAILED: usertrace_availability = 4;

// cbindgen needs literals; the core owns the numbering.
const _: () = {
    const fn code(a: Availability) -> usertrace_availability {
        a.code() as usertrace_availability
    }
    assert!(USERTRACE_AVAILABLE == code(Availability::Available));
    assert!(USERTRACE_TRACEFS_NOT_MOUNTED == code(Availability::TracefsNotMounted));
    assert!(USERTRACE_USER_EVENTS_MISSING == code(Availability::UserEventsMissing));
    assert!(USERTRACE_PERMISSION_DENIED == code(Availability::PermissionDenied));
    assert!(USERTRACE_OPEN_FAILED == code(Availability::OpenFailed));
    assert!(Availability::ALL.len() == 5, "a new Availability needs its USERTRACE_ constant");
};

/// Probes tracefs and `user_events_data` now (never cached), and when that
/// cannot tell why there are no user_events, reads the kernel's build
/// config: the core's verdict, the one `usertrace status` gives. Writes a
/// sentence saying what was found, and what to do about it, into `buf`
/// (`len` bytes, NUL-terminated, truncated if needed; `buf` may be NULL
/// with `len` 0). As with `snprintf`, `*out_n` (if not NULL) gets the
/// sentence's full length without the NUL, also when it was truncated: a
/// buffer of `*out_n + 1` bytes holds it all. Returns one of the
/// `USERTRACE_*` availability values.
///
/// # Safety
/// `buf` NULL or valid for `len` bytes; `out_n` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_status(buf: *mut c_char, len: usize, out_n: *mut usize) -> usertrace_availability {
    boundary::guard_value(USERTRACE_OPEN_FAILED, || {
        let status = ut::status();
        // SAFETY: write_message needs "`buf` valid for `len` bytes (or NULL
        // with `len` 0); `out_n` NULL or valid", which is this function's
        // own contract: "`buf` NULL or valid for `len` bytes; `out_n` NULL or
        // valid". (A NULL `buf` with a nonzero `len` writes nothing.)
        unsafe { boundary::write_message(&status.to_string(), buf.cast(), len, out_n) };
        status.availability.code() as usertrace_availability
    })
}

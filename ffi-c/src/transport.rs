//! `usertrace_transport`: which way this process's events leave it, the
//! kernel's user_events or shared memory, and why (the core's
//! `usertrace::transport()`, which owns the rule `USERTRACE_TRANSPORT`
//! follows).
//!
//! # Safety
//! The export is `#[no_mangle]` and writes its answer into the caller's
//! pointers, under its contract.
#![allow(unsafe_code)]

use std::ffi::c_char;

use ut::Transport;

use crate::boundary;
use crate::error::{usertrace_result, Failure};

/// A transport, as `usertrace_transport` names it.
pub type usertrace_transport_kind = i32;
/// The kernel's user_events: one `writev` into the trace buffers.
pub const USERTRACE_TRANSPORT_USER_EVENTS: usertrace_transport_kind = 0;
/// Shared memory in `/dev/shm`, read by `usertrace record`, on any kernel.
pub const USERTRACE_TRANSPORT_SHM: usertrace_transport_kind = 1;

fn kind(transport: Transport) -> usertrace_transport_kind {
    match transport {
        Transport::UserEvents => USERTRACE_TRANSPORT_USER_EVENTS,
        Transport::SharedMemory => USERTRACE_TRANSPORT_SHM,
    }
}

/// Which transport this process's registrations use (or its next one
/// would): `USERTRACE_TRANSPORT` set to `user_events` or `shm` forces one;
/// `auto` (or unset) takes user_events where `usertrace_status` finds it
/// usable, and shared memory where the kernel has none (tracefs not
/// mounted, or no user_events). A user_events that exists but may not be
/// opened stays the transport, so that registrations report its problem.
/// Once a registration used a transport, the process keeps it.
///
/// Sets `*out_transport` (if not NULL) to a `USERTRACE_TRANSPORT_*` value
/// and writes why, in a sentence, into `buf` (`len` bytes, NUL-terminated,
/// truncated if needed; `*out_n`, if not NULL, its full length, as
/// `usertrace_status` does). Returns `USERTRACE_OK`, or
/// `USERTRACE_ERR_UNAVAILABLE` when `USERTRACE_TRANSPORT` holds anything
/// else: then nothing registers, and `buf` and `usertrace_last_error` say
/// what it holds and what it may be.
///
/// # Safety
/// `out_transport` NULL or valid; `buf` NULL or valid for `len` bytes;
/// `out_n` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_transport(
    out_transport: *mut usertrace_transport_kind,
    buf: *mut c_char,
    len: usize,
    out_n: *mut usize,
) -> usertrace_result {
    let mut sentence = String::new();
    let result = boundary::guard(|| {
        let choice = ut::transport().map_err(|e| {
            sentence = e.to_string();
            Failure::from(e)
        })?;
        sentence = choice.to_string();
        if !out_transport.is_null() {
            // SAFETY: not NULL, so valid ("`out_transport` NULL or valid").
            unsafe { *out_transport = kind(choice.transport) };
        }
        Ok(())
    });
    // SAFETY: write_message needs "`buf` valid for `len` bytes (or NULL
    // with `len` 0); `out_n` NULL or valid", this function's own contract
    // for them. (A NULL `buf` with a nonzero `len` writes nothing.)
    unsafe { boundary::write_message(&sentence, buf.cast(), len, out_n) };
    result
}

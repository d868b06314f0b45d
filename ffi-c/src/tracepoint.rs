//! Dynamic tracepoints: an opaque `usertrace_tracepoint` whose name and
//! fields are given at run time (for runtimes that embed C), with
//! `_new`/`_free`.
//!
//! The enable word lives inside the handle, on libusertrace's heap: it keeps
//! its address until `usertrace_tracepoint_free`, which unregisters before
//! freeing (and leaks the word if the kernel refuses).
//!
//! # Safety
//! A handle is `Box::into_raw` of a [`usertrace_tracepoint`], given to C
//! by `_new` and taken back once by `usertrace_tracepoint_free`; C promises
//! to pass only live handles, and not to use one while it is freed.
#![allow(unsafe_code)]

use std::ffi::c_char;

use ut::{Definition, DynamicTracepoint, RegisterOptions};

use crate::boundary::{guard, guard_value};
use crate::error::{non_null, usertrace_result, Failure};
use crate::event::{usertrace_event_kind, USERTRACE_KIND_EVENT};
use crate::field::{self, str_arg, usertrace_field};
use crate::value::{usertrace_value, with_values};

/// Registration flags of `usertrace_tracepoint_new`.
pub type usertrace_flags = u32;
/// `USER_EVENT_REG_PERSIST`: the event outlives the process (CAP_PERFMON).
pub const USERTRACE_FLAG_PERSIST: usertrace_flags = 1;
/// `USER_EVENT_REG_MULTI_FORMAT`: allow the same name with other fields.
pub const USERTRACE_FLAG_MULTI_FORMAT: usertrace_flags = 2;

/// A tracepoint defined at run time. Opaque.
pub struct usertrace_tracepoint {
    pub(crate) inner: DynamicTracepoint,
    /// What it was made as (`USERTRACE_KIND_*`): a span begins only on a
    /// span's tracepoint and ends only on a span end's.
    pub(crate) kind: usertrace_event_kind,
}

pub(crate) fn options(flags: usertrace_flags) -> Result<RegisterOptions, Failure> {
    if flags & !(USERTRACE_FLAG_PERSIST | USERTRACE_FLAG_MULTI_FORMAT) != 0 {
        return Err(Failure::Invalid(format!("unknown flags {flags:#x}")));
    }
    Ok(RegisterOptions {
        persist: flags & USERTRACE_FLAG_PERSIST != 0,
        multi_format: flags & USERTRACE_FLAG_MULTI_FORMAT != 0,
    })
}

/// Validates a definition and makes a handle; nothing is registered yet.
///
/// # Safety
/// `fields` valid for `count` elements, each `name` NULL or a C string.
pub(crate) unsafe fn define(
    name: &str,
    fields: *const usertrace_field,
    count: usize,
    flags: usertrace_flags,
) -> Result<Box<usertrace_tracepoint>, Failure> {
    ut::validate_name("event", name)?;
    // SAFETY: what field::convert needs is this function's own contract.
    let fields = unsafe { field::convert(name, fields, count) }?;
    handle(Definition::new(name, fields)?, USERTRACE_KIND_EVENT, flags)
}

/// A handle of `kind` for `definition`; nothing is registered yet.
pub(crate) fn handle(
    definition: Definition,
    kind: usertrace_event_kind,
    flags: usertrace_flags,
) -> Result<Box<usertrace_tracepoint>, Failure> {
    let inner = DynamicTracepoint::from_definition(definition, options(flags)?);
    Ok(Box::new(usertrace_tracepoint { inner, kind }))
}

/// Writes one event through `tp` if a tracer is attached.
///
/// # Safety
/// `values` valid for `count` elements, as [`with_values`] needs.
#[inline]
pub(crate) unsafe fn emit(tp: &DynamicTracepoint, values: *const usertrace_value, count: usize) -> Result<(), Failure> {
    if !tp.enabled() {
        return Ok(());
    }
    // SAFETY: "`values` valid for `count` elements".
    unsafe { with_values(values, count, |values| tp.emit(values)) }
}

/// Defines the event `name` (`[A-Za-z0-9_]+`) with `count` fields (copied:
/// the caller's array may go away). Flags are `USERTRACE_FLAG_*`. On
/// success `*out` gets a handle to free with `usertrace_tracepoint_free`.
/// Not registered yet: call `usertrace_tracepoint_register`, so that a bad
/// definition and an unavailable kernel are told apart.
///
/// # Safety
/// `name` a C string; `fields` valid for `count` elements; `out` valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_new(
    name: *const c_char,
    fields: *const usertrace_field,
    count: usize,
    flags: usertrace_flags,
    out: *mut *mut usertrace_tracepoint,
) -> usertrace_result {
    guard(|| {
        non_null(out, "out")?;
        // SAFETY: "`name` a C string" (or NULL, refused), read during the call.
        let name = unsafe { str_arg(name, "name") }?;
        // SAFETY: "`fields` valid for `count` elements".
        let tp = unsafe { define(name, fields, count, flags) }?;
        // SAFETY: not NULL, so "`out` valid"; written only on success.
        unsafe { *out = Box::into_raw(tp) };
        Ok(())
    })
}

/// Registers with the kernel; retries if an earlier attempt failed, does
/// nothing if registered. `USERTRACE_ERR_UNAVAILABLE` without user_events.
///
/// # Safety
/// `tp` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_register(tp: *const usertrace_tracepoint) -> usertrace_result {
    guard(|| {
        // SAFETY: not NULL, so "a live handle".
        unsafe { &*non_null(tp, "tp")? }.inner.register()?;
        Ok(())
    })
}

/// Stops the kernel writing the enable word; the handle stays valid and may
/// register again.
///
/// # Safety
/// `tp` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_unregister(tp: *const usertrace_tracepoint) -> usertrace_result {
    guard(|| {
        // SAFETY: not NULL, so "a live handle".
        unsafe { &*non_null(tp, "tp")? }.inner.unregister()?;
        Ok(())
    })
}

/// Whether a tracer is attached (false for NULL). A function call: hot
/// paths read `usertrace_tracepoint_enable_word` once and use
/// `USERTRACE_WORD_ENABLED` on it.
///
/// # Safety
/// `tp` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_enabled(tp: *const usertrace_tracepoint) -> bool {
    // SAFETY: not NULL, so "a live handle".
    guard_value(false, || !tp.is_null() && unsafe { &*tp }.inner.enabled())
}

/// The address of the word the kernel sets while a tracer is attached
/// (nonzero = enabled); valid until `usertrace_tracepoint_free`. NULL for
/// a NULL handle.
///
/// # Safety
/// `tp` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_enable_word(tp: *const usertrace_tracepoint) -> *const u32 {
    guard_value(std::ptr::null(), || {
        if tp.is_null() {
            return std::ptr::null();
        }
        // SAFETY: not NULL, so "a live handle".
        unsafe { &*tp }.inner.tracepoint().enable_word()
    })
}

/// Writes one event if a tracer is attached: `count` values in field order,
/// each of its field's type. No allocation; does nothing (and returns
/// `USERTRACE_OK`) when disabled or unregistered.
///
/// # Safety
/// `tp` NULL or a live handle; `values` valid for `count` elements.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_emit(
    tp: *const usertrace_tracepoint,
    values: *const usertrace_value,
    count: usize,
) -> usertrace_result {
    guard(|| {
        // SAFETY: not NULL, so "a live handle".
        let tp = unsafe { &*non_null(tp, "tp")? };
        // SAFETY: "`values` valid for `count` elements".
        unsafe { emit(&tp.inner, values, count) }
    })
}

/// Checks `count` values as `usertrace_tracepoint_emit` would (count, types,
/// lengths, NUL bytes in strings, the size perf can record), whether or not
/// a tracer is attached, and writes nothing. The result is the one the emit
/// would give, and `usertrace_last_error` explains it.
///
/// # Safety
/// `tp` NULL or a live handle; `values` valid for `count` elements.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_validate(
    tp: *const usertrace_tracepoint,
    values: *const usertrace_value,
    count: usize,
) -> usertrace_result {
    guard(|| {
        // SAFETY: not NULL, so "a live handle".
        let tp = &unsafe { &*non_null(tp, "tp")? }.inner;
        // SAFETY: "`values` valid for `count` elements".
        unsafe { with_values(values, count, |values| tp.validate(values)) }
    })
}

/// Unregisters and frees the handle (NULL is ignored). If the kernel
/// refuses to unregister, the enable word is leaked, never freed: the
/// kernel could still write it. No other thread may use `tp` meanwhile.
///
/// # Safety
/// `tp` NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_free(tp: *mut usertrace_tracepoint) {
    guard_value((), || {
        if !tp.is_null() {
            // SAFETY: "a live handle, not used afterwards": Box::into_raw's
            // from `_new`, freed this once.
            drop(unsafe { Box::from_raw(tp) });
        }
    })
}

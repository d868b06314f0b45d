//! Static tracepoints declared in C: `usertrace_event`, made by the
//! `USERTRACE_EVENT` macro, registered through its provider.
//!
//! The enable word is the struct's first member, in the C program's own
//! data, and the kernel writes it directly (core's `ExternalTracepoint`). So
//! `USERTRACE_ENABLED(ev)` is one relaxed load at a fixed address and no
//! call. The price is the rule the kernel imposes on any enable word: it must
//! be unregistered before its memory goes, which the provider's destructor
//! does when the code that holds it is unloaded.
//!
//! # Safety
//! A `usertrace_event` is the C program's static data, live while its
//! code is loaded. Its enable word and registration pointer are only ever
//! accessed atomically (the kernel, `USERTRACE_ENABLED` and this library),
//! so they are read here as the atomics of the same size and alignment;
//! a registration is read only inside an [`EmitScope`], which a release
//! waits for before it frees one.
#![allow(unsafe_code)]

use std::ffi::c_char;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use ut::{EmitScope, ExternalTracepoint};

use crate::boundary::guard;
use crate::error::{non_null, usertrace_result, Failure};
use crate::field::usertrace_field;
use crate::value::{usertrace_value, with_values};

/// libusertrace's registration of one `usertrace_event`. Opaque.
pub struct usertrace_event_registration {
    pub(crate) inner: ExternalTracepoint,
}

/// What a `usertrace_event` is registered as: `USERTRACE_KIND_*`.
pub type usertrace_event_kind = u16;
/// An event (`USERTRACE_EVENT`): registered with its fields as declared.
pub const USERTRACE_KIND_EVENT: usertrace_event_kind = 0;
/// A span's begin event (`USERTRACE_SPAN`): registered with the span id
/// (`u64 span_begin`) in front of its fields; begun with
/// `usertrace_event_begin_span`.
pub const USERTRACE_KIND_SPAN: usertrace_event_kind = 1;
/// A provider's `<provider>_span_end` event, made by `USERTRACE_PROVIDER`:
/// its name and fields are the core's (`u64 span_end`), not declared here.
pub const USERTRACE_KIND_SPAN_END: usertrace_event_kind = 2;

/// A tracepoint declared in C with `USERTRACE_EVENT` or `USERTRACE_SPAN`.
/// Only the kernel and libusertrace write it (atomically); read `enabled`
/// with `USERTRACE_ENABLED`.
#[repr(C)]
pub struct usertrace_event {
    /// The enable word: the kernel sets it while a tracer is attached.
    pub enabled: u32,
    pub field_count: u16,
    /// A `USERTRACE_KIND_*`. With `field_count` it fills the 4 bytes that
    /// a `uint32_t field_count` held before spans, so the offsets stay.
    pub kind: usertrace_event_kind,
    /// The event's name within its provider: registered as
    /// `<provider>_<name>`.
    pub name: *const c_char,
    pub fields: *const usertrace_field,
    /// The registration, or NULL until the provider first registers.
    pub registration: *mut usertrace_event_registration,
}

// The layout programs compiled before `kind` existed still have: the same
// size and offsets (their `field_count`, at most 32, reads back the same on
// little-endian machines, with kind 0: an event).
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<usertrace_event>() == 32);
    assert!(std::mem::offset_of!(usertrace_event, name) == 8);
    assert!(std::mem::offset_of!(usertrace_event, registration) == 24);
};

/// The enable word of `ev`, as the atomic that the kernel and C treat it as.
///
/// # Safety
/// `ev` a live `usertrace_event`, for as long as `'a`.
pub(crate) unsafe fn enabled_of<'a>(ev: *const usertrace_event) -> &'a AtomicU32 {
    // SAFETY: `ev` is "a live `usertrace_event`" for `'a`; `u32` and
    // `AtomicU32` share size and alignment, and every access to the word
    // is atomic (the kernel's, USERTRACE_ENABLED's, ours).
    unsafe { &*std::ptr::addr_of!((*ev).enabled).cast::<AtomicU32>() }
}

/// The registration pointer of `ev`, as an atomic.
///
/// # Safety
/// `ev` a live `usertrace_event`, for as long as `'a`.
pub(crate) unsafe fn registration_of<'a>(ev: *const usertrace_event) -> &'a AtomicPtr<usertrace_event_registration> {
    // SAFETY: `ev` is "a live `usertrace_event`" for `'a`; `AtomicPtr<T>`
    // has the layout of `*mut T`, and only this library writes the field,
    // atomically.
    unsafe { &*std::ptr::addr_of!((*ev).registration).cast::<AtomicPtr<usertrace_event_registration>>() }
}

/// Calls `write` with the registration of `ev` while a tracer is attached
/// to it; gives `T::default()` (nothing written) when nobody listens or
/// `ev` is not registered.
///
/// # Safety
/// `ev` a live `usertrace_event`.
#[inline]
pub(crate) unsafe fn with_registration<T: Default>(
    ev: *const usertrace_event,
    write: impl FnOnce(&ExternalTracepoint) -> Result<T, Failure>,
) -> Result<T, Failure> {
    // The word is the C program's own: a disabled event costs one load
    // here too, and no shared counter.
    // SAFETY: "`ev` a live `usertrace_event`".
    if unsafe { enabled_of(ev) }.load(Ordering::Relaxed) == 0 {
        return Ok(T::default());
    }
    // Counted until the end of this function, so a concurrent release
    // waits before it frees the registration (see core's `EmitScope`).
    let _emit = EmitScope::enter();
    // ATOMICS: SeqCst: after the count, against the release's clear;
    // it also acquires the registration's Release store, so the
    // registration is seen whole.
    // SAFETY: "`ev` a live `usertrace_event`".
    let registration = unsafe { registration_of(ev) }.load(Ordering::SeqCst);
    if registration.is_null() {
        return Ok(T::default());
    }
    // SAFETY: a registration is a `Box` that the provider's release frees
    // only after clearing the pointer and waiting for every emit scope, and
    // `_emit` lives until `write` returns.
    write(unsafe { &(*registration).inner })
}

/// Writes one event of `ev` if a tracer is attached; `USERTRACE_EMIT` calls
/// it after `USERTRACE_ENABLED`. Returns `USERTRACE_OK` without writing
/// when the event is not registered.
///
/// # Safety
/// `ev` NULL or a `USERTRACE_EVENT`; `values` valid for `count` elements.
#[no_mangle]
pub unsafe extern "C" fn usertrace_event_emit(
    ev: *const usertrace_event,
    values: *const usertrace_value,
    count: usize,
) -> usertrace_result {
    guard(|| {
        let ev = non_null(ev, "ev")?;
        let emit = |registration: &ExternalTracepoint| {
            // SAFETY: "`values` valid for `count` elements".
            unsafe { with_values(values, count, |values| registration.emit(values)) }
        };
        // SAFETY: not NULL, so "a `USERTRACE_EVENT`": static data of the
        // code that calls, live during the call.
        unsafe { with_registration(ev, emit) }
    })
}

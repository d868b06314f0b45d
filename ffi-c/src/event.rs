//! Static tracepoints declared in C: `usertrace_event`, made by the
//! `USERTRACE_EVENT` macro, registered through its provider.
//!
//! `enable` points at the word the kernel writes: at first the constant
//! `usertrace_disabled_word`, and while registered the enable word of the
//! dynamic tracepoint behind it. So `USERTRACE_ENABLED(ev)` is two relaxed
//! loads (the pointer, then the word) and no call; the pointer sits in the
//! C program's own data, next to the rest of the event.

use std::ffi::c_char;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::boundary::guard;
use crate::error::{non_null, usertrace_result};
use crate::field::usertrace_field;
use crate::tracepoint::{self, usertrace_tracepoint};
use crate::value::usertrace_value;

/// Always 0, never registered: where every unregistered event's `enable`
/// points.
#[no_mangle]
pub static usertrace_disabled_word: u32 = 0;

/// A tracepoint declared in C with `USERTRACE_EVENT`. Only libusertrace
/// writes `enable` and `tracepoint` (atomically); read `enable` with
/// `USERTRACE_ENABLED`.
#[repr(C)]
pub struct usertrace_event {
    /// The enable word: nonzero while a tracer is attached.
    pub enable: *const u32,
    /// The registered tracepoint, or NULL.
    pub tracepoint: *mut usertrace_tracepoint,
    /// The event's name within its provider: registered as
    /// `<provider>_<name>`.
    pub name: *const c_char,
    pub fields: *const usertrace_field,
    pub field_count: u32,
}

// ATOMICS: `AtomicPtr<T>` has the layout of `*mut T`; C only ever loads
// these fields with `__atomic_load_n`, and this library stores them.
pub(crate) unsafe fn enable_of<'a>(ev: *const usertrace_event) -> &'a AtomicPtr<u32> {
    &*std::ptr::addr_of!((*ev).enable).cast::<AtomicPtr<u32>>()
}

pub(crate) unsafe fn tracepoint_of<'a>(ev: *const usertrace_event) -> &'a AtomicPtr<usertrace_tracepoint> {
    &*std::ptr::addr_of!((*ev).tracepoint).cast::<AtomicPtr<usertrace_tracepoint>>()
}

pub(crate) fn disabled_word() -> *mut u32 {
    std::ptr::addr_of!(usertrace_disabled_word).cast_mut()
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
        // ATOMICS: Acquire pairs with the Release store in registration.
        let tp = tracepoint_of(ev).load(Ordering::Acquire);
        if tp.is_null() {
            return Ok(());
        }
        tracepoint::emit(&(*tp).inner, values, count)
    })
}

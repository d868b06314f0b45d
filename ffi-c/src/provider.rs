//! Providers: the events of one `USERTRACE_PROVIDER`, registered and
//! unregistered together, and released when their code is unloaded.
//!
//! `USERTRACE_PROVIDER` also emits a destructor that calls
//! `usertrace_provider_release`: when a shared library that declares
//! tracepoints is dlclose'd (or the program exits), its events are
//! unregistered before the memory behind them is freed.

use std::ffi::c_char;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use crate::boundary::guard;
use crate::error::{non_null, usertrace_result, Failure};
use crate::event::{disabled_word, enable_of, tracepoint_of, usertrace_event};
use crate::field::str_arg;
use crate::tracepoint::{self, usertrace_flags};

/// A provider declared with `USERTRACE_PROVIDER`.
#[repr(C)]
pub struct usertrace_provider {
    /// Prefix of every event name: `<name>_<event>`.
    pub name: *const c_char,
    /// The provider's events, NULL-terminated.
    pub events: *const *mut usertrace_event,
    /// `USERTRACE_FLAG_*` for every event.
    pub flags: usertrace_flags,
}

/// Serialises register, unregister and release of every provider.
static PROVIDERS: Mutex<()> = Mutex::new(());

unsafe fn for_each_event(
    p: *const usertrace_provider,
    mut f: impl FnMut(*mut usertrace_event) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let p = non_null(p, "provider")?;
    let mut events = non_null((*p).events, "provider events")?;
    let mut first_error = None;
    while !(*events).is_null() {
        if let Err(e) = f(*events) {
            first_error.get_or_insert(e);
        }
        events = events.add(1);
    }
    first_error.map_or(Ok(()), Err)
}

/// Registers every event of `p` (creating its tracepoint on first use).
/// Tries all; returns the first error. Calling it again retries the ones
/// that failed.
///
/// # Safety
/// `p` NULL or a `USERTRACE_PROVIDER`.
#[no_mangle]
pub unsafe extern "C" fn usertrace_provider_register(p: *const usertrace_provider) -> usertrace_result {
    guard(|| {
        let _lock = PROVIDERS.lock().unwrap_or_else(|e| e.into_inner());
        let provider = ut::Provider::new(str_arg((*non_null(p, "provider")?).name, "provider name")?)?;
        let flags = (*p).flags;
        for_each_event(p, |ev| {
            let slot = tracepoint_of(ev);
            let mut tp = slot.load(Ordering::Acquire);
            if tp.is_null() {
                let event = str_arg((*ev).name, "event name")?;
                if !ut::is_valid_name(event) {
                    return Err(Failure::Invalid(format!("invalid event name {event:?}: use only ASCII letters, digits and '_'")));
                }
                let name = provider.event_name(event);
                tp = Box::into_raw(tracepoint::define(&name, (*ev).fields, (*ev).field_count as usize, flags)?);
                // ATOMICS: Release pairs with the Acquire in
                // `usertrace_event_emit`: who sees the handle sees it whole.
                slot.store(tp, Ordering::Release);
            }
            (*tp).inner.register()?;
            enable_of(ev).store((*tp).inner.tracepoint().enable_word().cast_mut(), Ordering::Release);
            Ok(())
        })
    })
}

/// Unregisters every event of `p`: they read as disabled at once. Their
/// tracepoints stay allocated (a concurrent emit stays safe) and register
/// again with `usertrace_provider_register`.
///
/// # Safety
/// `p` NULL or a `USERTRACE_PROVIDER`.
#[no_mangle]
pub unsafe extern "C" fn usertrace_provider_unregister(p: *const usertrace_provider) -> usertrace_result {
    guard(|| {
        let _lock = PROVIDERS.lock().unwrap_or_else(|e| e.into_inner());
        for_each_event(p, |ev| {
            enable_of(ev).store(disabled_word(), Ordering::Release);
            let tp = tracepoint_of(ev).load(Ordering::Acquire);
            if !tp.is_null() {
                (*tp).inner.unregister()?;
            }
            Ok(())
        })
    })
}

/// Unregisters every event of `p` and frees its tracepoints (a word the
/// kernel refuses to unregister is leaked, never freed). The destructor
/// made by `USERTRACE_PROVIDER` calls it when the code is unloaded. No
/// thread may emit `p`'s events meanwhile. `p` can register again later.
///
/// # Safety
/// `p` NULL or a `USERTRACE_PROVIDER`.
#[no_mangle]
pub unsafe extern "C" fn usertrace_provider_release(p: *const usertrace_provider) -> usertrace_result {
    guard(|| {
        let _lock = PROVIDERS.lock().unwrap_or_else(|e| e.into_inner());
        for_each_event(p, |ev| {
            enable_of(ev).store(disabled_word(), Ordering::Release);
            let tp = tracepoint_of(ev).swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !tp.is_null() {
                // Drop unregisters first, and leaks the word if it cannot.
                drop(Box::from_raw(tp));
            }
            Ok(())
        })
    })
}

//! Providers: the events of one `USERTRACE_PROVIDER`, registered and
//! unregistered together, and released when their code is unloaded.
//!
//! `USERTRACE_PROVIDER` also emits a destructor that calls
//! `usertrace_provider_release`: when a shared library that declares
//! tracepoints is dlclose'd (or the program exits), its events are
//! unregistered before the memory behind them is freed: their enable
//! words live in that memory.
//!
//! # Safety
//! A `usertrace_provider` and its events are the C program's static data,
//! made by the macros: a NULL-terminated event list, names that are C
//! strings, live while the code that declared them is loaded. Registrations
//! are `Box`es this module makes and frees, under `PROVIDERS`; an event's
//! enable word is registered in place, and unregistered before the code
//! holding it can go (the provider's destructor).
#![allow(unsafe_code)]

use std::ffi::c_char;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use ut::ExternalTracepoint;

use crate::boundary::guard;
use crate::error::{non_null, usertrace_result, Failure};
use crate::event::{
    enabled_of, registration_of, usertrace_event, usertrace_event_registration, USERTRACE_KIND_EVENT, USERTRACE_KIND_SPAN,
    USERTRACE_KIND_SPAN_END,
};
use crate::field::{self, lossy, str_arg};
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
    /// The provider's `<name>_span_end` event (`USERTRACE_KIND_SPAN_END`),
    /// which ends its spans. Registered with the events when one of them is
    /// a span, and read only then: a provider compiled before spans existed
    /// lacks this member and has no span.
    pub span_end: *mut usertrace_event,
}

/// Serialises register, unregister and release of every provider.
static PROVIDERS: Mutex<()> = Mutex::new(());

/// Calls `f` on every event of `p`, then on its `span_end` if one of them
/// is a span. Tries all; returns the first error. A span without a valid
/// `span_end` fails before any event is touched, so a provider is refused
/// whole, and for the same reason on every kernel.
///
/// # Safety
/// `p` NULL or a `USERTRACE_PROVIDER`.
unsafe fn for_each_event(
    p: *const usertrace_provider,
    mut f: impl FnMut(*mut usertrace_event) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let p = non_null(p, "provider")?;
    // SAFETY: not NULL, so "a `USERTRACE_PROVIDER`".
    let events = non_null(unsafe { (*p).events }, "provider events")?;
    // SAFETY: a USERTRACE_PROVIDER's `events` is NULL-terminated, so every
    // index up to the NULL is in the array.
    let listed = || (0..).map(move |i| unsafe { *events.add(i) }).take_while(|ev| !ev.is_null());
    // SAFETY: each listed event is a USERTRACE_EVENT of the provider.
    let has_span = listed().any(|ev| unsafe { (*ev).kind } == USERTRACE_KIND_SPAN);
    // SAFETY: `p` is a USERTRACE_PROVIDER, as span_end_of needs.
    let span_end = if has_span { Some(unsafe { span_end_of(p) }?) } else { None };
    let mut first_error = None;
    for ev in listed().chain(span_end) {
        if let Err(e) = f(ev) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The `span_end` event of `p`, checked to be one.
///
/// # Safety
/// `p` a `USERTRACE_PROVIDER` (not NULL) of a version with `span_end`,
/// which one with a span event is.
pub(crate) unsafe fn span_end_of(p: *const usertrace_provider) -> Result<*mut usertrace_event, Failure> {
    // SAFETY: "`p` a `USERTRACE_PROVIDER`" that has the member.
    let end = non_null(unsafe { (*p).span_end }, "provider span_end")?;
    // SAFETY: not NULL: the provider's USERTRACE_EVENT of its span end.
    let kind = unsafe { (*end).kind };
    if kind != USERTRACE_KIND_SPAN_END {
        // SAFETY: a provider's name is NULL or a C string, as lossy needs.
        let provider = unsafe { lossy((*p).name) };
        return Err(Failure::Invalid(format!(
            "the span_end of provider {provider} is of kind {kind}, not USERTRACE_KIND_SPAN_END; declare providers with USERTRACE_PROVIDER"
        )));
    }
    Ok(end.cast_mut())
}

/// Registers every event of `p`. Tries all; returns the first error.
/// Calling it again retries the ones that failed.
///
/// # Safety
/// `p` NULL or a `USERTRACE_PROVIDER`.
#[no_mangle]
pub unsafe extern "C" fn usertrace_provider_register(p: *const usertrace_provider) -> usertrace_result {
    guard(|| {
        let _lock = PROVIDERS.lock().unwrap_or_else(|e| e.into_inner());
        let p = non_null(p, "provider")?;
        // SAFETY: not NULL, so "a `USERTRACE_PROVIDER`", whose name is NULL
        // or a C string that lives as long as the provider.
        let provider = ut::Provider::new(unsafe { str_arg((*p).name, "provider name") }?)?;
        // SAFETY: as above.
        let flags = unsafe { (*p).flags };
        let register = |ev: *mut usertrace_event| {
            // SAFETY: `ev` is one of the provider's live events.
            let slot = unsafe { registration_of(ev) };
            let mut registration = slot.load(Ordering::Acquire);
            if registration.is_null() {
                // SAFETY: as above; `ev` is a USERTRACE_EVENT in static
                // storage, as define needs.
                registration = Box::into_raw(unsafe { define(&provider, ev, flags) }?);
                // ATOMICS: Release pairs with the Acquire in
                // `usertrace_event_emit`: who sees the pointer sees it whole.
                slot.store(registration, Ordering::Release);
            }
            // SAFETY: a Box of ours, freed only by a release, which holds
            // PROVIDERS as we do.
            unsafe { &*registration }.inner.register()?;
            Ok(())
        };
        // SAFETY: "`p` NULL or a `USERTRACE_PROVIDER`".
        unsafe { for_each_event(p, register) }
    })
}

/// The registration of the `USERTRACE_EVENT` (or `USERTRACE_SPAN`, or the
/// provider's span end) `ev`, over its own enable word.
///
/// # Safety
/// `ev` a `USERTRACE_EVENT` of a provider (static storage).
unsafe fn define(
    provider: &ut::Provider,
    ev: *mut usertrace_event,
    flags: usertrace_flags,
) -> Result<Box<usertrace_event_registration>, Failure> {
    // SAFETY: "`ev` a `USERTRACE_EVENT`".
    let definition = unsafe { definition_of(provider, ev) }?;
    // SAFETY: as above: live for as long as its code is loaded.
    let word = NonNull::from(unsafe { enabled_of(ev) });
    let options = tracepoint::options(flags)?;
    // SAFETY: ExternalTracepoint::new needs the word "valid for atomic reads
    // and writes, 4-byte aligned, and only ever accessed atomically", and
    // in place "until unregister returns Ok". `ev` is a USERTRACE_EVENT:
    // static storage of the program or library that declared it, so the
    // word never moves; it is a u32 accessed only atomically; and it is
    // freed only when that code is unloaded, after the provider's
    // destructor has released (unregistered) the event.
    let inner = unsafe { ExternalTracepoint::new(word, definition, options) };
    Ok(Box::new(usertrace_event_registration { inner }))
}

/// What `ev` is registered as: its kind decides, the core builds it.
///
/// # Safety
/// `ev` a `USERTRACE_EVENT`: `name` a C string, `fields` valid for
/// `field_count` elements.
unsafe fn definition_of(provider: &ut::Provider, ev: *const usertrace_event) -> Result<ut::Definition, Failure> {
    // SAFETY: "`ev` a `USERTRACE_EVENT`". Its
    // members are read by place, not through a reference to the struct:
    // the kernel writes the enable word beside them.
    let (kind, name, fields, count) = unsafe { ((*ev).kind, (*ev).name, (*ev).fields, (*ev).field_count) };
    if kind == USERTRACE_KIND_SPAN_END {
        return Ok(ut::Definition::span_end(provider.name())?);
    }
    // SAFETY: "`name` a C string".
    let event = unsafe { str_arg(name, "event name") }?;
    // The same check, and so the same code, as usertrace_tracepoint_new's.
    ut::validate_name("event", event)?;
    // SAFETY: "`fields` valid for `field_count` elements".
    let fields = unsafe { field::convert(&provider.event_name(event), fields, usize::from(count)) }?;
    Ok(match kind {
        USERTRACE_KIND_EVENT => ut::Definition::with_provider(provider.name(), event, fields)?,
        USERTRACE_KIND_SPAN => ut::Definition::span_begin(provider.name(), event, fields)?,
        other => {
            return Err(Failure::Invalid(format!(
                "event {} has kind {other}, not a USERTRACE_KIND_ constant; declare it with USERTRACE_EVENT or USERTRACE_SPAN",
                provider.event_name(event)
            )))
        }
    })
}

/// Unregisters every event of `p`: the kernel clears their enable words and
/// stops writing them. They register again with
/// `usertrace_provider_register`.
///
/// # Safety
/// `p` NULL or a `USERTRACE_PROVIDER`.
#[no_mangle]
pub unsafe extern "C" fn usertrace_provider_unregister(p: *const usertrace_provider) -> usertrace_result {
    guard(|| {
        let _lock = PROVIDERS.lock().unwrap_or_else(|e| e.into_inner());
        let unregister = |ev: *mut usertrace_event| {
            // SAFETY: `ev` is one of the provider's live events.
            let registration = unsafe { registration_of(ev) }.load(Ordering::Acquire);
            if !registration.is_null() {
                // SAFETY: a Box of ours, freed only by a release, which
                // holds PROVIDERS as we do.
                unsafe { &*registration }.inner.unregister()?;
            }
            Ok(())
        };
        // SAFETY: "`p` NULL or a `USERTRACE_PROVIDER`".
        unsafe { for_each_event(p, unregister) }
    })
}

/// Unregisters every event of `p` and frees what libusertrace holds for
/// them. The destructor made by `USERTRACE_PROVIDER` calls it when the code
/// is unloaded, or at exit. Other threads may go on emitting `p`'s events:
/// their emits either finish first or do nothing. If the kernel refuses an
/// unregistration, that event is kept (and the error returned): its memory
/// must then not be unloaded. `p` can register again later.
///
/// # Safety
/// `p` NULL or a `USERTRACE_PROVIDER`.
#[no_mangle]
pub unsafe extern "C" fn usertrace_provider_release(p: *const usertrace_provider) -> usertrace_result {
    guard(|| {
        let _lock = PROVIDERS.lock().unwrap_or_else(|e| e.into_inner());
        let release = |ev: *mut usertrace_event| {
            // SAFETY: `ev` is one of the provider's live events.
            let slot = unsafe { registration_of(ev) };
            let registration = slot.load(Ordering::Acquire);
            if registration.is_null() {
                return Ok(());
            }
            // SAFETY: a Box of ours, freed only below, under PROVIDERS.
            unsafe { &*registration }.inner.unregister()?;
            // ATOMICS: SeqCst, against the emits' count and load (see
            // core's `EmitScope`): after the wait, none can still hold it.
            slot.store(std::ptr::null_mut(), Ordering::SeqCst);
            if ut::wait_for_emits() {
                // SAFETY: Box::into_raw's, taken out of the slot above; every
                // emit that could have loaded it has left its scope.
                drop(unsafe { Box::from_raw(registration) });
            }
            // Otherwise an emit may still read it: leaked, never freed. It
            // is unregistered, so the kernel is done with the word.
            Ok(())
        };
        // SAFETY: "`p` NULL or a `USERTRACE_PROVIDER`".
        unsafe { for_each_event(p, release) }
    })
}

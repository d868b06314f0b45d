//! Providers: the events of one `USERTRACE_PROVIDER`, registered and
//! unregistered together, and released when their code is unloaded.
//!
//! `USERTRACE_PROVIDER` also emits a destructor that calls
//! `usertrace_provider_release`: when a shared library that declares
//! tracepoints is dlclose'd (or the program exits), its events are
//! unregistered before the memory behind them is freed: their enable
//! words live in that memory.

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
unsafe fn for_each_event(
    p: *const usertrace_provider,
    mut f: impl FnMut(*mut usertrace_event) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let p = non_null(p, "provider")?;
    let events = non_null((*p).events, "provider events")?;
    // SAFETY (caller): `events` is NULL-terminated.
    let listed = || (0..).map(move |i| *events.add(i)).take_while(|ev| !ev.is_null());
    let span_end = if listed().any(|ev| (*ev).kind == USERTRACE_KIND_SPAN) { Some(span_end_of(p)?) } else { None };
    let mut first_error = None;
    for ev in listed().chain(span_end) {
        if let Err(e) = f(ev) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The `span_end` event of `p`, checked to be one.
pub(crate) unsafe fn span_end_of(p: *const usertrace_provider) -> Result<*mut usertrace_event, Failure> {
    let end = non_null((*p).span_end, "provider span_end")?;
    if (*end).kind != USERTRACE_KIND_SPAN_END {
        return Err(Failure::Invalid(format!(
            "the span_end of provider {} is of kind {}, not USERTRACE_KIND_SPAN_END; declare providers with USERTRACE_PROVIDER",
            lossy((*p).name),
            (*end).kind
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
        let provider = ut::Provider::new(str_arg((*non_null(p, "provider")?).name, "provider name")?)?;
        let flags = (*p).flags;
        for_each_event(p, |ev| {
            let slot = registration_of(ev);
            let mut registration = slot.load(Ordering::Acquire);
            if registration.is_null() {
                registration = Box::into_raw(define(&provider, ev, flags)?);
                // ATOMICS: Release pairs with the Acquire in
                // `usertrace_event_emit`: who sees the pointer sees it whole.
                slot.store(registration, Ordering::Release);
            }
            (*registration).inner.register()?;
            Ok(())
        })
    })
}

/// The registration of the `USERTRACE_EVENT` (or `USERTRACE_SPAN`, or the
/// provider's span end) `ev`, over its own enable word.
unsafe fn define(
    provider: &ut::Provider,
    ev: *mut usertrace_event,
    flags: usertrace_flags,
) -> Result<Box<usertrace_event_registration>, Failure> {
    let definition = definition_of(provider, ev)?;
    let word = NonNull::from(enabled_of(ev));
    // SAFETY: `ev` is a USERTRACE_EVENT: static storage of the program or
    // library that declared it, so the word never moves. It is freed only
    // when that code is unloaded, and the provider's destructor releases
    // (unregisters) the event first.
    let inner = ExternalTracepoint::new(word, definition, tracepoint::options(flags)?);
    Ok(Box::new(usertrace_event_registration { inner }))
}

/// What `ev` is registered as: its kind decides, the core builds it.
unsafe fn definition_of(provider: &ut::Provider, ev: *const usertrace_event) -> Result<ut::Definition, Failure> {
    let kind = (*ev).kind;
    if kind == USERTRACE_KIND_SPAN_END {
        return Ok(ut::Definition::span_end(provider.name())?);
    }
    let event = str_arg((*ev).name, "event name")?;
    // The same check, and so the same code, as usertrace_tracepoint_new's.
    ut::validate_name("event", event)?;
    let fields = field::convert(&provider.event_name(event), (*ev).fields, usize::from((*ev).field_count))?;
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
        for_each_event(p, |ev| {
            let registration = registration_of(ev).load(Ordering::Acquire);
            if !registration.is_null() {
                (*registration).inner.unregister()?;
            }
            Ok(())
        })
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
        for_each_event(p, |ev| {
            let slot = registration_of(ev);
            let registration = slot.load(Ordering::Acquire);
            if registration.is_null() {
                return Ok(());
            }
            (*registration).inner.unregister()?;
            // ATOMICS: SeqCst, against the emits' count and load (see
            // core's `EmitScope`): after the wait, none can still hold it.
            slot.store(std::ptr::null_mut(), Ordering::SeqCst);
            if ut::wait_for_emits() {
                drop(Box::from_raw(registration));
            }
            // Otherwise an emit may still read it: leaked, never freed. It
            // is unregistered, so the kernel is done with the word.
            Ok(())
        })
    })
}

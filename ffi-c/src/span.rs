//! Spans from C: begin returns an id, end takes it (core's `span` module
//! owns the convention: the begin event's first field is `u64 span_begin`,
//! the provider's `<provider>_span_end` carries `u64 span_end`).
//!
//! Static spans are `USERTRACE_SPAN` events of a provider, ended through
//! that provider's span end event, which `USERTRACE_PROVIDER` declares.
//! Dynamic ones are `usertrace_tracepoint` handles made by
//! `usertrace_tracepoint_new_span` and `_new_span_end`. An id is a plain
//! `uint64_t`, so a span may end on another thread than the one that began
//! it; 0 means "not begun" (nobody listened), and ending 0 writes nothing.
//!
//! A span begun with `_in` (`usertrace_event_begin_span_in`,
//! `usertrace_tracepoint_begin_span_in`, `USERTRACE_SPAN_BEGIN_IN`) has a
//! parent, from this process or another (`trace_context`): it writes its
//! trace context and hands out its own. One begun without writes none,
//! and a reader places it by nesting on its thread, as before.
//!
//! The kind of each event or handle is checked before anything else, so
//! beginning a plain event or ending on a span's own event is an error
//! whether or not a tracer is attached.
//!
//! # Safety
//! Events and providers are the C program's static data (see `event` and
//! `provider`), handles those of `tracepoint`; the exports read them, and
//! write the id only through the caller's `out_id` and `out`.
#![allow(unsafe_code)]

use std::ffi::c_char;

use ut::TraceContext;

use crate::boundary::guard;
use crate::error::{non_null, usertrace_result, Failure};
use crate::event::{with_registration, usertrace_event, usertrace_event_kind, USERTRACE_KIND_SPAN, USERTRACE_KIND_SPAN_END};
use crate::field::{self, lossy, str_arg, usertrace_field};
use crate::provider::{span_end_of, usertrace_provider};
use crate::trace_context::{parent_of, usertrace_trace_context};
use crate::tracepoint::{handle, usertrace_flags, usertrace_tracepoint};
use crate::value::{usertrace_value, with_values};

/// Begins the span `span` (a `USERTRACE_SPAN`) if a tracer is attached:
/// writes a new id, then the `count` values (the span's fields, in order),
/// and stores the id in `*out_id`, to end the span with
/// `usertrace_provider_end_span`. While nobody listens (or the span's
/// provider is not registered) `*out_id` is 0 and nothing is written or
/// checked. `USERTRACE_SPAN_BEGIN` calls it after its own load of
/// `span->enabled`.
///
/// # Safety
/// `span` NULL or a `USERTRACE_SPAN`; `values` valid for `count` elements;
/// `out_id` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_event_begin_span(
    span: *const usertrace_event,
    values: *const usertrace_value,
    count: usize,
    out_id: *mut u64,
) -> usertrace_result {
    guard(|| {
        // SAFETY: "`span` NULL or a `USERTRACE_SPAN`".
        let span = unsafe { span_event(span) }?;
        non_null(out_id, "out_id")?;
        let begin = |begin: &ut::ExternalTracepoint| {
            // SAFETY: "`values` valid for `count` elements".
            unsafe { with_values(values, count, |values| begin.begin_span(values)) }
        };
        // SAFETY: `span` is a live event, as above.
        let id = unsafe { with_registration(span, begin) }?;
        // SAFETY: not NULL, so "`out_id` valid"; written only on success.
        unsafe { *out_id = id };
        Ok(())
    })
}

/// Begins the span `span` (a `USERTRACE_SPAN`) under `parent`, a span of
/// this process or of another (read from a `traceparent` header with
/// `usertrace_trace_context_parse`, or another span's `*out_context`); a
/// NULL `parent`, or one whose trace id or span id is 0, begins a new
/// trace. If a tracer is attached it writes the span's id and trace
/// context, then the `count` values; `*out_id` gets the id, to end the
/// span with `usertrace_provider_end_span`, and `*out_context` (unless
/// NULL) the span's context, for the next service (its `traceparent`:
/// `usertrace_trace_context_format`). While nobody listens nothing is
/// written or checked, `*out_id` is 0, and `*out_context` is `*parent`,
/// passed on unchanged (all zeros under no parent), so that the trace
/// goes on through a service nobody records. `USERTRACE_SPAN_BEGIN_IN`
/// calls it after its own load of `span->enabled`.
///
/// # Safety
/// `span` NULL or a `USERTRACE_SPAN`; `parent` NULL or valid; `values`
/// valid for `count` elements; `out_id` NULL or valid; `out_context` NULL
/// or valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_event_begin_span_in(
    span: *const usertrace_event,
    parent: *const usertrace_trace_context,
    values: *const usertrace_value,
    count: usize,
    out_id: *mut u64,
    out_context: *mut usertrace_trace_context,
) -> usertrace_result {
    guard(|| {
        // SAFETY: "`span` NULL or a `USERTRACE_SPAN`".
        let span = unsafe { span_event(span) }?;
        non_null(out_id, "out_id")?;
        // SAFETY: "`parent` NULL or valid".
        let parent = unsafe { parent_of(parent) };
        let begin = |begin: &ut::ExternalTracepoint| {
            // SAFETY: "`values` valid for `count` elements".
            unsafe { with_values(values, count, |values| begin.begin_span_in(parent.as_ref(), values)) }.map(Some)
        };
        // SAFETY: `span` is a live event, as above.
        let begun = unsafe { with_registration(span, begin) }?;
        // SAFETY: "`out_id` NULL or valid" (not NULL); "`out_context` NULL
        // or valid"; written only on success.
        unsafe { write_begun(begun, parent, out_id, out_context) };
        Ok(())
    })
}

/// Writes what a begin under `parent` gave (`None`: nothing was written)
/// into the caller's `out_id` and `out_context`.
///
/// # Safety
/// `out_id` valid; `out_context` NULL or valid.
unsafe fn write_begun(begun: Option<ut::Begun>, parent: Option<TraceContext>, out_id: *mut u64, out_context: *mut usertrace_trace_context) {
    let begun = begun.unwrap_or(ut::Begun { id: 0, context: parent });
    let context = begun.context.as_ref().map_or_else(usertrace_trace_context::default, usertrace_trace_context::from_core);
    // SAFETY: "`out_id` valid".
    unsafe { *out_id = begun.id };
    // SAFETY: "`out_context` NULL or valid".
    if let Some(out) = unsafe { out_context.as_mut() } {
        *out = context;
    }
}

/// The event `span`, if it is a `USERTRACE_SPAN`: beginning a plain event
/// is an error whether or not a tracer is attached.
///
/// # Safety
/// `span` NULL or a `usertrace_event`.
unsafe fn span_event(span: *const usertrace_event) -> Result<*const usertrace_event, Failure> {
    let span = non_null(span, "span")?;
    // SAFETY: not NULL, so a `usertrace_event`, live as static data of the
    // code that calls. (Read by place, not through a reference: the kernel
    // writes the enable word beside it.)
    let kind = unsafe { (*span).kind };
    if kind != USERTRACE_KIND_SPAN {
        // SAFETY: as above; an event's name is NULL or a C string, as
        // lossy needs.
        let name = unsafe { lossy((*span).name) };
        return Err(Failure::Invalid(format!(
            "event {name} is not a span: declare it with USERTRACE_SPAN to begin it, or emit it with USERTRACE_EMIT"
        )));
    }
    Ok(span)
}

/// Ends the span `id` of provider `p`: writes `<provider>_span_end` with
/// the id if a tracer is attached to it. `id` is what
/// `usertrace_event_begin_span` (or `USERTRACE_SPAN_BEGIN`) gave, on any
/// thread; 0, a span that was not begun, writes nothing.
/// `USERTRACE_SPAN_END` calls it only for an id other than 0.
///
/// # Safety
/// `p` NULL or a `USERTRACE_PROVIDER`.
#[no_mangle]
pub unsafe extern "C" fn usertrace_provider_end_span(p: *const usertrace_provider, id: u64) -> usertrace_result {
    guard(|| {
        // SAFETY: not NULL, so "a `USERTRACE_PROVIDER`"; span_end_of checks
        // its `span_end` is one.
        let end = unsafe { span_end_of(non_null(p, "provider")?) }?;
        if id == 0 {
            return Ok(());
        }
        // SAFETY: `end` is the provider's span end event, live as it is.
        unsafe { with_registration(end, |end| Ok(end.end_span(id)?)) }
    })
}

/// Defines the span `<provider>_<name>` at run time: its begin event,
/// whose fields are the span id (`u64 span_begin`), then the `count`
/// fields given (copied). Flags and the handle are as for
/// `usertrace_tracepoint_new`: register it, begin spans with
/// `usertrace_tracepoint_begin_span`, free it with
/// `usertrace_tracepoint_free`. The spans end on the provider's
/// `usertrace_tracepoint_new_span_end` handle.
///
/// # Safety
/// `provider` and `name` C strings; `fields` valid for `count` elements;
/// `out` valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_new_span(
    provider: *const c_char,
    name: *const c_char,
    fields: *const usertrace_field,
    count: usize,
    flags: usertrace_flags,
    out: *mut *mut usertrace_tracepoint,
) -> usertrace_result {
    guard(|| {
        non_null(out, "out")?;
        // SAFETY: "`provider` and `name` C strings" (or NULL, refused).
        let provider = unsafe { str_arg(provider, "provider") }?;
        // SAFETY: as above.
        let name = unsafe { str_arg(name, "name") }?;
        // Names first, so that a field's error names a valid event.
        ut::validate_name("provider", provider)?;
        ut::validate_name("event", name)?;
        // SAFETY: "`fields` valid for `count` elements".
        let fields = unsafe { field::convert(&format!("{provider}_{name}"), fields, count) }?;
        let tp = handle(ut::Definition::span_begin(provider, name, fields)?, USERTRACE_KIND_SPAN, flags)?;
        // SAFETY: not NULL, so "`out` valid"; written only on success.
        unsafe { *out = Box::into_raw(tp) };
        Ok(())
    })
}

/// Defines `<provider>_span_end` at run time, which ends the spans of
/// `provider` (`usertrace_tracepoint_end_span`). Flags and the handle are
/// as for `usertrace_tracepoint_new`.
///
/// # Safety
/// `provider` a C string; `out` valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_new_span_end(
    provider: *const c_char,
    flags: usertrace_flags,
    out: *mut *mut usertrace_tracepoint,
) -> usertrace_result {
    guard(|| {
        non_null(out, "out")?;
        // SAFETY: "`provider` a C string" (or NULL, refused).
        let provider = unsafe { str_arg(provider, "provider") }?;
        let tp = handle(ut::Definition::span_end(provider)?, USERTRACE_KIND_SPAN_END, flags)?;
        // SAFETY: not NULL, so "`out` valid"; written only on success.
        unsafe { *out = Box::into_raw(tp) };
        Ok(())
    })
}

/// Begins a span on `tp` (from `usertrace_tracepoint_new_span`) if a
/// tracer is attached: writes a new id, then the `count` values, and
/// stores the id in `*out_id`. While nobody listens `*out_id` is 0 and
/// nothing is written or checked; hot paths test the handle's enable word
/// (`USERTRACE_WORD_ENABLED`) first.
///
/// # Safety
/// `tp` NULL or a live handle; `values` valid for `count` elements;
/// `out_id` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_begin_span(
    tp: *const usertrace_tracepoint,
    values: *const usertrace_value,
    count: usize,
    out_id: *mut u64,
) -> usertrace_result {
    guard(|| {
        // SAFETY: "`tp` NULL or a live handle".
        let tp = unsafe { of_kind(tp, USERTRACE_KIND_SPAN, "a span: make it with usertrace_tracepoint_new_span") }?;
        non_null(out_id, "out_id")?;
        let id = if tp.inner.enabled() {
            // SAFETY: "`values` valid for `count` elements".
            unsafe { with_values(values, count, |values| tp.inner.begin_span(values)) }?
        } else {
            0
        };
        // SAFETY: not NULL, so "`out_id` valid"; written only on success.
        unsafe { *out_id = id };
        Ok(())
    })
}

/// Begins a span on `tp` (from `usertrace_tracepoint_new_span`) under
/// `parent`, as `usertrace_event_begin_span_in` begins a static one: its
/// id in `*out_id`, the context to hand on in `*out_context` (unless
/// NULL); while nobody listens, 0 and `*parent` passed on.
///
/// # Safety
/// `tp` NULL or a live handle; `parent` NULL or valid; `values` valid for
/// `count` elements; `out_id` NULL or valid; `out_context` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_begin_span_in(
    tp: *const usertrace_tracepoint,
    parent: *const usertrace_trace_context,
    values: *const usertrace_value,
    count: usize,
    out_id: *mut u64,
    out_context: *mut usertrace_trace_context,
) -> usertrace_result {
    guard(|| {
        // SAFETY: "`tp` NULL or a live handle".
        let tp = unsafe { of_kind(tp, USERTRACE_KIND_SPAN, "a span: make it with usertrace_tracepoint_new_span") }?;
        non_null(out_id, "out_id")?;
        // SAFETY: "`parent` NULL or valid".
        let parent = unsafe { parent_of(parent) };
        let begun = if tp.inner.enabled() {
            // SAFETY: "`values` valid for `count` elements".
            Some(unsafe { with_values(values, count, |values| tp.inner.begin_span_in(parent.as_ref(), values)) }?)
        } else {
            None
        };
        // SAFETY: "`out_id` NULL or valid" (not NULL); "`out_context` NULL
        // or valid"; written only on success.
        unsafe { write_begun(begun, parent, out_id, out_context) };
        Ok(())
    })
}

/// Ends span `id` on `tp` (from `usertrace_tracepoint_new_span_end`), if
/// a tracer is attached; nothing for id 0.
///
/// # Safety
/// `tp` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn usertrace_tracepoint_end_span(tp: *const usertrace_tracepoint, id: u64) -> usertrace_result {
    guard(|| {
        // SAFETY: "`tp` NULL or a live handle".
        let tp = unsafe { of_kind(tp, USERTRACE_KIND_SPAN_END, "a span end: make it with usertrace_tracepoint_new_span_end") }?;
        Ok(tp.inner.end_span(id)?)
    })
}

/// The handle `tp`, if it was made as `kind`.
///
/// # Safety
/// `tp` NULL or a live handle, for as long as `'a`.
unsafe fn of_kind<'a>(
    tp: *const usertrace_tracepoint,
    kind: usertrace_event_kind,
    should_be: &str,
) -> Result<&'a usertrace_tracepoint, Failure> {
    // SAFETY: not NULL, so "a live handle" for `'a`.
    let tp = unsafe { &*non_null(tp, "tp")? };
    if tp.kind != kind {
        return Err(Failure::Invalid(format!("tracepoint {} is not {should_be}", tp.inner.name())));
    }
    Ok(tp)
}

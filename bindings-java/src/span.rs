//! Spans (see the core's `usertrace::span`): begin one on a span's begin
//! tracepoint, with the id the core hands out, and end one by id on the
//! provider's `span_end` tracepoint. Java never makes an id itself.
//!
//! # Safety
//! Handles are those of `tracepoint.rs`, under its contract: each one
//! received here points at a live box.
#![allow(unsafe_code)]

use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use usertrace::span::{self, with_leading_values};
use usertrace::{DynamicTracepoint, Field};

use crate::boundary::{hot, Failure, Result, Throw};
use crate::tables::strings;
use crate::tracepoint::{tracepoint, with_values_of};

/// The span's own fields: all but the leading `span_begin` and trace
/// context, which the core fills in. Refuses a tracepoint that is no
/// span's begin event, so a jar bug cannot shift every value by a field.
pub(crate) fn own_fields(tp: &DynamicTracepoint) -> Result<&[Field]> {
    span::own_fields(tp.fields())
        .ok_or_else(|| Failure::IllegalArgument(format!("usertrace: {} is not a span's begin event", tp.name())))
}

/// Begins a span with the span's own values encoded at `address` (see
/// `values.rs`): the core's `begin_span` takes an id and puts it in front.
/// Returns the id, or 0 (nothing emitted) while nobody listens.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_beginSpan0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    address: jlong,
    length: jint,
) -> jlong {
    // The emit path: see `boundary::hot`.
    hot(&mut env, || -> Result<jlong> {
        // SAFETY: see the module docs.
        let tp = unsafe { tracepoint(handle) };
        if !tp.enabled() {
            return Ok(0);
        }
        // SAFETY: as `emit0`'s: the calling thread's buffer, kept reachable.
        let id = unsafe { with_values_of(own_fields(tp)?, address, length, |values| tp.begin_span(values)) }?;
        // Java's long holds the u64's bits (a W3C span id uses all 64).
        Ok(id as jlong)
    })
}

/// Checks a span's own values as `beginSpan0` would, enabled or not.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_validateSpanBegin0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    address: jlong,
    length: jint,
) {
    env.with_env(|_env| -> Result<()> {
        // SAFETY: see the module docs.
        let tp = unsafe { tracepoint(handle) };
        // SAFETY: as `validate0`'s.
        unsafe {
            with_values_of(own_fields(tp)?, address, length, |values| {
                // Any id suits the u64 field; the values are what is checked.
                with_leading_values(&span::begin_leading_values(0, None), values, |all| tp.validate(all))
            })
        }
    })
    .resolve::<Throw>()
}

/// Ends span `id` on a provider's `span_end` tracepoint; nothing for 0.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_endSpan0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    id: jlong,
) {
    // The emit path: see `boundary::hot`.
    hot(&mut env, || -> Result<()> {
        // SAFETY: see the module docs.
        Ok(unsafe { tracepoint(handle) }.end_span(id as u64)?)
    })
}

/// The convention's names, so a Java test can hold `Span`'s constants to
/// the core's: `span_begin`, `span_end` (field), `span_end` (event),
/// `span_start_ns`, `span_duration_ns`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_spanNames0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JObjectArray<'caller, JString<'caller>> {
    env.with_env(|env| -> Result<_> {
        let names = [
            span::SPAN_BEGIN_FIELD,
            span::SPAN_END_FIELD,
            span::SPAN_END_EVENT,
            span::SPAN_START_NS_FIELD,
            span::SPAN_DURATION_NS_FIELD,
        ];
        strings(env, names.iter().map(|n| n.to_string()).collect())
    })
    .resolve::<Throw>()
}

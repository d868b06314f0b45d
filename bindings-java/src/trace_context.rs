//! W3C trace context for Java (`dev.usertrace.TraceContext`): the core's
//! rules for reading a `traceparent` and `tracestate`, writing a
//! `traceparent`, and beginning a span under a parent. Java holds the
//! numbers; it parses and makes no id itself.
//!
//! A context crosses JNI as a `long[4]`: trace id high and low halves,
//! span id, flags. A trace id of 0 means no context.
//!
//! # Safety
//! Handles are those of `tracepoint.rs`, under its contract: each one
//! received here points at a live box.
#![allow(unsafe_code)]

use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jint, jlong};
use jni::{Env, EnvUnowned};
use usertrace::trace_context::{TraceContext, TraceState};

use crate::boundary::{Failure, Result, Throw};
use crate::span::own_fields;
use crate::tracepoint::{tracepoint, with_values_of};

fn split(trace_id: u128) -> (jlong, jlong) {
    ((trace_id >> 64) as u64 as jlong, trace_id as u64 as jlong)
}

fn write(env: &Env<'_>, out: &JLongArray<'_>, context: Option<&TraceContext>) -> Result<()> {
    let words = match context {
        Some(c) => {
            let (hi, lo) = split(c.trace_id);
            [hi, lo, c.span_id as jlong, jlong::from(c.flags)]
        }
        None => [0; 4],
    };
    Ok(out.set_region(env, 0, &words)?)
}

fn read(env: &Env<'_>, from: &JLongArray<'_>) -> Result<Option<TraceContext>> {
    let mut words = [0 as jlong; 4];
    from.get_region(env, 0, &mut words)?;
    let trace_id = (u128::from(words[0] as u64) << 64) | u128::from(words[1] as u64);
    let flags = u8::try_from(words[3]).map_err(|_| Failure::IllegalArgument(format!("usertrace: trace flags {} are not a byte", words[3])))?;
    Ok(TraceContext::new(trace_id, words[2] as u64, flags))
}

/// Reads `traceparent` into `out` (zeros for no context: malformed, all
/// zeros, too long). Returns the `tracestate` kept ("" for none or an
/// invalid one); `tracestate` may be null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_parseTraceparent0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    traceparent: JString<'caller>,
    tracestate: JString<'caller>,
    out: JLongArray<'caller>,
) -> JString<'caller> {
    env.with_env(|env| -> Result<JString<'caller>> {
        let context = TraceContext::from_traceparent(&traceparent.try_to_string(env)?).ok();
        write(env, &out, context.as_ref())?;
        let state = if tracestate.is_null() { None } else { TraceState::parse(&tracestate.try_to_string(env)?) };
        Ok(env.new_string(state.as_ref().map_or("", |s| s.as_str()))?)
    })
    .resolve::<Throw>()
}

/// The `traceparent` header value of the context in `context`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_traceparent0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    context: JLongArray<'caller>,
) -> JString<'caller> {
    env.with_env(|env| -> Result<JString<'caller>> {
        let context = read(env, &context)?.ok_or_else(|| Failure::IllegalArgument("usertrace: no trace context".into()))?;
        Ok(env.new_string(context.traceparent().as_str())?)
    })
    .resolve::<Throw>()
}

/// Begins a span under the parent in `context` (zeros: a new trace), with
/// the span's own values at `address` (see `values.rs`), and writes the
/// span's own context into `context`. Returns the id, or 0 (nothing
/// emitted, `context` unchanged) while nobody listens.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_beginSpanIn0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    address: jlong,
    length: jint,
    context: JLongArray<'caller>,
) -> jlong {
    env.with_env(|env| -> Result<jlong> {
        // SAFETY: see the module docs.
        let tp = unsafe { tracepoint(handle) };
        let parent = read(env, &context)?;
        // SAFETY: as `beginSpan0`'s: the calling thread's buffer, kept reachable.
        let begun = unsafe { with_values_of(own_fields(tp)?, address, length, |values| tp.begin_span_in(parent.as_ref(), values)) }?;
        if begun.id != 0 {
            write(env, &context, begun.context.as_ref())?;
        }
        Ok(begun.id as jlong)
    })
    .resolve::<Throw>()
}

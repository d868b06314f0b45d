//! OpenTelemetry spans and log records for Java (`dev.usertrace.OtelSpans`,
//! `dev.usertrace.OtelLogs`): the events an SDK's finished spans and its
//! log records travel in. The rule (fields, parts) is the core's
//! (`usertrace::otel_span`); these exports only convert the arguments.
//!
//! A trace id crosses JNI as two `long`s, its high and low halves; ids are
//! unsigned in Java's `long` bits.
//!
//! # Safety
//! A handle is `Box::into_raw` of an [`OtelSpanTracepoints`] (from
//! `otelSpans0`) or an [`OtelLogTracepoints`] (from `otelLogs0`), as a
//! `jlong`. `OtelSpans.java` and `OtelLogs.java` keep it private, pass it
//! only while the Java object is reachable, and free it exactly once, with
//! the matching free, from their `Cleaner`. So every handle received here
//! points at a live box of the type the export expects.
#![allow(unsafe_code)]

use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;
use usertrace::{OtelLog, OtelLogTracepoints, OtelSpan, OtelSpanTracepoints, Provider};

use crate::boundary::{Failure, Result, Throw};

fn trace_id(hi: jlong, lo: jlong) -> u128 {
    (u128::from(hi as u64) << 64) | u128::from(lo as u64)
}

/// Java's `int` count of events written; the core never writes more than
/// `MAX_PARTS`, but a bad count must not wrap silently.
fn count(written: usize) -> Result<jint> {
    jint::try_from(written).map_err(|_| Failure::IllegalArgument(format!("usertrace: {written} events do not fit an int")))
}

/// # Safety
/// `handle` must come from `otelSpans0` and not be freed (see module docs).
unsafe fn spans<'a>(handle: jlong) -> &'a OtelSpanTracepoints {
    // SAFETY: by the caller's contract the box is live; only shared
    // references are made from a handle until its free.
    unsafe { &*(handle as usize as *const OtelSpanTracepoints) }
}

/// # Safety
/// `handle` must come from `otelLogs0` and not be freed (see module docs).
unsafe fn logs<'a>(handle: jlong) -> &'a OtelLogTracepoints {
    // SAFETY: as `spans`.
    unsafe { &*(handle as usize as *const OtelLogTracepoints) }
}

/// Declares and registers `<provider>_otel_span` and its part event;
/// throws where usertrace cannot. Returns the handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelSpans0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    provider: JString<'caller>,
) -> jlong {
    env.with_env(|env| -> Result<jlong> {
        let tracepoints = OtelSpanTracepoints::new(&Provider::new(provider.try_to_string(env)?)?)?;
        Ok(Box::into_raw(Box::new(tracepoints)) as usize as jlong)
    })
    .resolve::<Throw>()
}

/// Whether a recorder listens to the spans: one load.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelSpansEnabled0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) -> jboolean {
    env.with_env(|_env| -> Result<bool> {
        // SAFETY: see the module docs.
        Ok(unsafe { spans(handle) }.enabled())
    })
    .resolve::<Throw>()
}

/// Writes one finished span (its OTLP `Span` protobuf in `otlp`), in parts
/// if it is large; returns how many events were written (0 while nobody
/// listens).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelSpanEmit0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    start_ns: jlong,
    duration_ns: jlong,
    trace_id_hi: jlong,
    trace_id_lo: jlong,
    span_id: jlong,
    parent_span_id: jlong,
    name: JString<'caller>,
    scope_name: JString<'caller>,
    scope_version: JString<'caller>,
    status_code: jint,
    otlp: JByteArray<'caller>,
) -> jint {
    env.with_env(|env| -> Result<jint> {
        let (name, scope_name, scope_version) =
            (name.try_to_string(env)?, scope_name.try_to_string(env)?, scope_version.try_to_string(env)?);
        let otlp = env.convert_byte_array(&otlp)?;
        let span = OtelSpan {
            start_ns: start_ns as u64,
            duration_ns: duration_ns as u64,
            trace_id: trace_id(trace_id_hi, trace_id_lo),
            span_id: span_id as u64,
            parent_span_id: parent_span_id as u64,
            name: &name,
            scope_name: &scope_name,
            scope_version: &scope_version,
            status_code: status_code as u32,
            otlp: &otlp,
        };
        // SAFETY: see the module docs.
        count(unsafe { spans(handle) }.emit(&span)?)
    })
    .resolve::<Throw>()
}

/// Unregisters and frees; called once, by the Cleaner.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelSpansFree0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        if handle != 0 {
            // SAFETY: see the module docs: this is the one free of the box.
            drop(unsafe { Box::from_raw(handle as usize as *mut OtelSpanTracepoints) });
        }
        Ok(())
    })
    .resolve::<Throw>()
}

/// Declares and registers `<provider>_otel_log` and its part event;
/// throws where usertrace cannot. Returns the handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelLogs0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    provider: JString<'caller>,
) -> jlong {
    env.with_env(|env| -> Result<jlong> {
        let tracepoints = OtelLogTracepoints::new(&Provider::new(provider.try_to_string(env)?)?)?;
        Ok(Box::into_raw(Box::new(tracepoints)) as usize as jlong)
    })
    .resolve::<Throw>()
}

/// Whether a recorder listens to the log records: one load.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelLogsEnabled0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) -> jboolean {
    env.with_env(|_env| -> Result<bool> {
        // SAFETY: see the module docs.
        Ok(unsafe { logs(handle) }.enabled())
    })
    .resolve::<Throw>()
}

/// Writes one log record (its OTLP `LogRecord` protobuf in `otlp`), in
/// parts if it is large; returns how many events were written.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelLogEmit0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    trace_id_hi: jlong,
    trace_id_lo: jlong,
    span_id: jlong,
    severity_number: jint,
    body: JString<'caller>,
    scope_name: JString<'caller>,
    scope_version: JString<'caller>,
    otlp: JByteArray<'caller>,
) -> jint {
    env.with_env(|env| -> Result<jint> {
        let severity_number = u32::try_from(severity_number)
            .map_err(|_| Failure::IllegalArgument(format!("usertrace: severity number {severity_number} is negative")))?;
        let (body, scope_name, scope_version) =
            (body.try_to_string(env)?, scope_name.try_to_string(env)?, scope_version.try_to_string(env)?);
        let otlp = env.convert_byte_array(&otlp)?;
        let log = OtelLog {
            trace_id: trace_id(trace_id_hi, trace_id_lo),
            span_id: span_id as u64,
            severity_number,
            body: &body,
            scope_name: &scope_name,
            scope_version: &scope_version,
            otlp: &otlp,
        };
        // SAFETY: see the module docs.
        count(unsafe { logs(handle) }.emit(&log)?)
    })
    .resolve::<Throw>()
}

/// Unregisters and frees; called once, by the Cleaner.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelLogsFree0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        if handle != 0 {
            // SAFETY: see the module docs: this is the one free of the box.
            drop(unsafe { Box::from_raw(handle as usize as *mut OtelLogTracepoints) });
        }
        Ok(())
    })
    .resolve::<Throw>()
}

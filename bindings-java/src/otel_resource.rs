//! An OpenTelemetry SDK's Resource for Java (`dev.usertrace.OtelResources`):
//! the process's `<provider>_otel_resource`. The rule (fields, when a
//! resource is due) is the core's (`usertrace::otel_resource`); these
//! exports only convert the arguments.
//!
//! # Safety
//! A handle is `Box::into_raw` of a `Box<Arc<OtelResourceTracepoint>>` (from
//! `otelResources0`), as a `jlong`. `OtelResources.java` keeps it private,
//! passes it only while the Java object is reachable, and frees it exactly
//! once, from its `Cleaner`. So every handle received here points at a live
//! box of that type.
#![allow(unsafe_code)]

use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jboolean, jlong};
use jni::EnvUnowned;
use usertrace::{OtelResource, OtelResourceTracepoint};

use crate::boundary::{Result, Throw};

/// # Safety
/// `handle` must come from `otelResources0` and not be freed (see module docs).
unsafe fn resources<'a>(handle: jlong) -> &'a OtelResourceTracepoint {
    // SAFETY: by the caller's contract the box is live; only shared
    // references are made from a handle until its free.
    unsafe { &*(handle as usize as *const Arc<OtelResourceTracepoint>) }
}

/// The process's `<provider>_otel_resource` (shared with every other
/// exporter of the process); throws where usertrace cannot register it.
/// Returns the handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelResources0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    provider: JString<'caller>,
) -> jlong {
    env.with_env(|env| -> Result<jlong> {
        let tracepoint = OtelResourceTracepoint::shared(&provider.try_to_string(env)?)?;
        Ok(Box::into_raw(Box::new(tracepoint)) as usize as jlong)
    })
    .resolve::<Throw>()
}

/// Whether a recorder listens: one load.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelResourcesEnabled0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) -> jboolean {
    env.with_env(|_env| -> Result<bool> {
        // SAFETY: see the module docs.
        Ok(unsafe { resources(handle) }.enabled())
    })
    .resolve::<Throw>()
}

/// Writes the resource (its OTLP `Resource` protobuf in `otlp`) if it is
/// due; returns whether it wrote.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelResourceEmit0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    service_name: JString<'caller>,
    otlp: JByteArray<'caller>,
) -> jboolean {
    env.with_env(|env| -> Result<bool> {
        let service_name = service_name.try_to_string(env)?;
        let otlp = env.convert_byte_array(&otlp)?;
        // SAFETY: see the module docs.
        Ok(unsafe { resources(handle) }.emit(&OtelResource { service_name: &service_name, otlp: &otlp })?)
    })
    .resolve::<Throw>()
}

/// Frees the handle (the shared event lives on while another holds it);
/// called once, by the Cleaner.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_otelResourcesFree0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        if handle != 0 {
            // SAFETY: see the module docs: this is the one free of the box.
            drop(unsafe { Box::from_raw(handle as usize as *mut Arc<OtelResourceTracepoint>) });
        }
        Ok(())
    })
    .resolve::<Throw>()
}

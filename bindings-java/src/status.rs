//! `usertrace::status()` for Java, and the ABI version check.
//!
//! # Safety
//! Nothing unsafe but the `#[unsafe(no_mangle)]` exports themselves.
#![allow(unsafe_code)]

use jni::objects::{JClass, JString};
use jni::EnvUnowned;

use crate::boundary::{Result, Throw};

/// Returns `"<availability code>\t<message>"`, the code the core's
/// (`dev.usertrace.Availability.code()`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_status0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JString<'caller> {
    env.with_env(|env| -> Result<JString<'caller>> {
        let status = usertrace::status();
        Ok(env.new_string(format!("{}\t{status}", status.availability.code()))?)
    })
    .resolve::<Throw>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_abiVersion0(
    _env: EnvUnowned<'_>,
    _class: JClass<'_>,
) -> jni::sys::jint {
    crate::ABI_VERSION
}

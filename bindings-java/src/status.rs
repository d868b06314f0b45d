//! `usertrace::status()` for Java, and the ABI version check.
//!
//! # Safety
//! Nothing unsafe but the `#[unsafe(no_mangle)]` exports themselves.
#![allow(unsafe_code)]

use jni::objects::{JClass, JString};
use jni::EnvUnowned;
use usertrace::Availability;

use crate::boundary::{Result, Throw};

/// Returns `"<availability>\t<message>"`; the number is the ordinal of
/// `dev.usertrace.Availability` (AVAILABLE = 0).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_status0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JString<'caller> {
    env.with_env(|env| -> Result<JString<'caller>> {
        let status = usertrace::status();
        let code = match status.availability {
            Availability::Available => 0,
            Availability::TracefsNotMounted => 1,
            Availability::UserEventsMissing => 2,
            Availability::PermissionDenied => 3,
            Availability::OpenFailed => 4,
        };
        Ok(env.new_string(format!("{code}\t{status}"))?)
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

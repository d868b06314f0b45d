//! `usertrace::transport()` for Java: which way this process's events leave
//! it, as the core decides (the rule lives there, not here).
//!
//! # Safety
//! Nothing unsafe but the `#[unsafe(no_mangle)]` export itself.
#![allow(unsafe_code)]

use jni::objects::{JClass, JObjectArray, JString};
use jni::EnvUnowned;

use crate::boundary::{Result, Throw};
use crate::tables::strings;

/// Returns `{name, reason, sentence}`: the core's transport name
/// (`user_events` or `shm`), its reason, and its `Display`. An invalid
/// `USERTRACE_TRANSPORT` throws `UsertraceException` with the core's message.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_transport0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JObjectArray<'caller, JString<'caller>> {
    env.with_env(|env| -> Result<_> {
        let choice = usertrace::transport()?;
        let sentence = choice.to_string();
        strings(env, vec![choice.transport.name().to_owned(), choice.reason, sentence])
    })
    .resolve::<Throw>()
}

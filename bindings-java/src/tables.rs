//! The core's code tables, so a Java test can hold `FieldType`, `ErrorKind`
//! and `Availability` to them: each row is `"<code>\t<name>"` (field types:
//! `"<code>\t<declared name>\t<name in messages>"`), in code order.
//!
//! # Safety
//! Nothing unsafe but the `#[unsafe(no_mangle)]` exports themselves.
#![allow(unsafe_code)]

use jni::objects::{JClass, JObjectArray, JString};
use jni::{Env, EnvUnowned};
use usertrace::{Availability, ErrorKind, FieldType};

use crate::boundary::{Result, Throw};

pub(crate) fn strings<'local>(env: &mut Env<'local>, rows: Vec<String>) -> Result<JObjectArray<'local, JString<'local>>> {
    let array = JObjectArray::<JString>::new(env, rows.len(), JString::default())?;
    for (i, row) in rows.into_iter().enumerate() {
        let s = env.new_string(row)?;
        array.set_element(env, i, &s)?;
    }
    Ok(array)
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_fieldTypes0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JObjectArray<'caller, JString<'caller>> {
    env.with_env(|env| -> Result<_> {
        let rows = FieldType::TABLE
            .iter()
            .map(|&(code, declared)| {
                let name = FieldType::from_code(code, 1).map_or("?", FieldType::name);
                format!("{code}\t{declared}\t{name}")
            })
            .collect();
        strings(env, rows)
    })
    .resolve::<Throw>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_errorKinds0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JObjectArray<'caller, JString<'caller>> {
    env.with_env(|env| -> Result<_> {
        strings(env, ErrorKind::ALL.iter().map(|k| format!("{}\t{}", k.code(), k.name())).collect())
    })
    .resolve::<Throw>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_availabilities0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JObjectArray<'caller, JString<'caller>> {
    env.with_env(|env| -> Result<_> {
        strings(env, Availability::ALL.iter().map(|a| format!("{}\t{}", a.code(), a.name())).collect())
    })
    .resolve::<Throw>()
}

//! Tracepoint handles: create, register, read the enable word, emit, free.
//!
//! # Safety
//! A handle is `Box::into_raw` of a [`DynamicTracepoint`], as a `jlong`.
//! `Tracepoint.java` keeps it private, passes it only while the Java object
//! is reachable (`Reference.reachabilityFence`), and frees it exactly once:
//! from its `Cleaner`, when nothing can call it any more. `close()` only
//! unregisters. So every handle received here points at a live box.
//!
//! The enable word therefore stays valid for as long as Java can read it
//! (through its `ByteBuffer` view, or its address from `bufferAddress0`): the
//! box is freed only when `EnableWord.java`, the one holder of either, is
//! unreachable; and the kernel writes the word only until
//! `DynamicTracepoint`'s unregistration, which precedes the free.
#![allow(unsafe_code)]

use jni::objects::{JByteBuffer, JClass, JIntArray, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;
use usertrace::{Definition, DynamicTracepoint, Field, FieldType, RegisterOptions, Value, MAX_FIELDS};

use crate::boundary::{hot, Failure, Result, Throw};
use crate::values;

/// # Safety
/// `handle` must come from `create0` and not be freed (see module docs).
pub(crate) unsafe fn tracepoint<'a>(handle: jlong) -> &'a DynamicTracepoint {
    // SAFETY: by the caller's contract the box is live; only shared
    // references are ever made from a handle until `free0`.
    unsafe { &*(handle as usize as *const DynamicTracepoint) }
}

/// What `create0` defines: `dev.usertrace.Tracepoint.Kind`'s codes. The
/// core adds the span convention's fields; Java passes only the event's own.
mod tracepoint_kind {
    pub(super) const EVENT: i32 = 0;
    /// `span_begin`, then the fields: [`usertrace::Definition::span_begin`].
    pub(super) const SPAN_BEGIN: i32 = 1;
    /// The provider's `span_end` event; `event` and fields are ignored: [`usertrace::Definition::span_end`].
    pub(super) const SPAN_END: i32 = 2;
    /// `span_start_ns`, `span_duration_ns`, then the fields: [`usertrace::Definition::completed_span`].
    pub(super) const COMPLETED_SPAN: i32 = 3;
}

/// Checks the definition `<provider>_<event>` of `kind` (see [`tracepoint_kind`]) in
/// the core; registers nothing. Field types are `dev.usertrace.FieldType`
/// codes, which are the core's ([`FieldType::from_code`]); `field_lengths`
/// holds each N of `char[N]` (0 for the other types). Returns the handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_create0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    provider: JString<'caller>,
    event: JString<'caller>,
    kind: jint,
    field_names: JObjectArray<'caller, JString<'caller>>,
    field_types: JIntArray<'caller>,
    field_lengths: JIntArray<'caller>,
    multi_format: jboolean,
    persist: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong> {
        let owner = usertrace::Provider::new(provider.try_to_string(env)?)?;
        let event = event.try_to_string(env)?;
        let count = field_names.len(env)?;
        if count != field_types.len(env)? || count != field_lengths.len(env)? {
            return Err(Failure::IllegalArgument("field names, types and lengths differ in number".into()));
        }
        let (mut codes, mut lengths) = (vec![0; count], vec![0; count]);
        field_types.get_region(env, 0, &mut codes)?;
        field_lengths.get_region(env, 0, &mut lengths)?;
        let mut fields = Vec::with_capacity(count);
        for (i, (&code, &len)) in codes.iter().zip(&lengths).enumerate() {
            let field_name = field_names.get_element(env, i)?.try_to_string(env)?;
            // Field.java refuses a negative length: it would not be a u32.
            let len = u32::try_from(len).map_err(|_| Failure::IllegalArgument(format!("field {field_name}: negative length")))?;
            let ty = u32::try_from(code).ok().and_then(|code| FieldType::from_code(code, len)).ok_or_else(|| {
                usertrace::Error::UnknownFieldType {
                    event: owner.event_name(&event),
                    field: field_name.clone(),
                    given: format!("number {code}"),
                }
            })?;
            fields.push(Field::owned(field_name, ty));
        }
        let definition = match kind {
            tracepoint_kind::EVENT => Definition::with_provider(owner.name(), &event, fields)?,
            tracepoint_kind::SPAN_BEGIN => Definition::span_begin(owner.name(), &event, fields)?,
            tracepoint_kind::SPAN_END => Definition::span_end(owner.name())?,
            tracepoint_kind::COMPLETED_SPAN => Definition::completed_span(owner.name(), &event, fields)?,
            other => return Err(Failure::IllegalArgument(format!("create0: {other} is not a tracepoint kind"))),
        };
        let tp = DynamicTracepoint::from_definition(definition, RegisterOptions { multi_format, persist });
        Ok(Box::into_raw(Box::new(tp)) as usize as jlong)
    })
    .resolve::<Throw>()
}

/// Raises `UsertraceException` (INVALID_NAME) unless `name` is a valid
/// `what` name (`provider`, `event` or `field`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_checkName0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    what: JString<'caller>,
    name: JString<'caller>,
) {
    env.with_env(|env| -> Result<()> {
        let what = match what.try_to_string(env)?.as_str() {
            "provider" => "provider",
            "event" => "event",
            "field" => "field",
            other => return Err(Failure::IllegalArgument(format!("checkName0: {other:?} is not provider, event or field"))),
        };
        Ok(usertrace::validate_name(what, &name.try_to_string(env)?)?)
    })
    .resolve::<Throw>()
}

/// Registers (again, if an earlier attempt failed); throws on failure.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_register0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        // SAFETY: see the module docs.
        Ok(unsafe { tracepoint(handle) }.register()?)
    })
    .resolve::<Throw>()
}

/// Unregisters: the kernel stops writing the enable word (and clears it).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_unregister0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        // SAFETY: see the module docs.
        Ok(unsafe { tracepoint(handle) }.unregister()?)
    })
    .resolve::<Throw>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_isRegistered0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) -> jboolean {
    env.with_env(|_env| -> Result<bool> {
        // SAFETY: see the module docs.
        Ok(unsafe { tracepoint(handle) }.is_registered())
    })
    .resolve::<Throw>()
}

/// A direct `ByteBuffer` of the 4 bytes the kernel writes. It owns nothing:
/// the word lives in the box and is freed with it (see the module docs).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_enableWord0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) -> JByteBuffer<'caller> {
    env.with_env(|env| -> Result<JByteBuffer<'caller>> {
        // SAFETY: see the module docs.
        let word = unsafe { tracepoint(handle) }.tracepoint().enable_word();
        // SAFETY: the word is 4 bytes, 8-aligned, and outlives the buffer:
        // the box is freed only after Java dropped its one reference to it.
        Ok(unsafe { env.new_direct_byte_buffer(word as *mut u8, 4) }?)
    })
    .resolve::<Throw>()
}

/// The address of a direct buffer, which Java caches per thread so that
/// `emit0` takes primitives only.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_bufferAddress0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    buffer: JByteBuffer<'caller>,
) -> jlong {
    env.with_env(|env| -> Result<jlong> { Ok(env.get_direct_buffer_address(&buffer)? as usize as jlong) })
        .resolve::<Throw>()
}

/// Emits the values encoded at `address` (see `values.rs`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_emit0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    address: jlong,
    length: jint,
) {
    // The emit path: see `boundary::hot`.
    hot(&mut env, || -> Result<()> {
        // SAFETY: see the module docs.
        let tp = unsafe { tracepoint(handle) };
        if !tp.enabled() {
            return Ok(());
        }
        // SAFETY: see `with_values`.
        unsafe { with_values(tp, address, length, |values| tp.emit(values)) }
    })
}

/// Checks the values encoded at `address` as an emit would (the core's
/// `validate`), whether or not the tracepoint is enabled; writes nothing.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_validate0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    address: jlong,
    length: jint,
) {
    env.with_env(|_env| -> Result<()> {
        // SAFETY: see the module docs.
        let tp = unsafe { tracepoint(handle) };
        // SAFETY: see `with_values`.
        unsafe { with_values(tp, address, length, |values| tp.validate(values)) }
    })
    .resolve::<Throw>()
}

/// Calls `f` with the values Java encoded at `address` for `tp` (see
/// `values.rs`), borrowing the buffer.
///
/// # Safety
/// `address` is that of the calling thread's direct buffer, which
/// `EventWriter.java` keeps reachable during the call and never fills past
/// its capacity; `length` is how far it filled it.
#[inline]
unsafe fn with_values(
    tp: &DynamicTracepoint,
    address: jlong,
    length: jint,
    f: impl FnOnce(&[Value<'_>]) -> std::result::Result<(), usertrace::Error>,
) -> Result<()> {
    // SAFETY: by the caller's contract.
    unsafe { with_values_of(tp.fields(), address, length, f) }
}

/// [`with_values`] for the values of `fields` only (a span's own fields,
/// after the `span_begin` id the core puts in front).
///
/// # Safety
/// As [`with_values`].
#[inline]
pub(crate) unsafe fn with_values_of<R>(
    fields: &[Field],
    address: jlong,
    length: jint,
    f: impl FnOnce(&[Value<'_>]) -> std::result::Result<R, usertrace::Error>,
) -> Result<R> {
    let len = usize::try_from(length).map_err(|_| Failure::IllegalArgument("negative length".into()))?;
    // SAFETY: by the caller's contract.
    let buf = unsafe { std::slice::from_raw_parts(address as usize as *const u8, len) };
    // Sized to the event, as the core's iovecs are: filling 32 values on
    // every emit was, measured natively, a third of this export's time.
    match fields.len() {
        0..=4 => decode_then::<4, R>(fields, buf, f),
        5..=8 => decode_then::<8, R>(fields, buf, f),
        9..=16 => decode_then::<16, R>(fields, buf, f),
        _ => decode_then::<MAX_FIELDS, R>(fields, buf, f),
    }
}

/// Decodes `buf` into `N` values on the stack (`N` at least the field count), then calls `f`.
#[inline(always)]
fn decode_then<const N: usize, R>(
    fields: &[Field],
    buf: &[u8],
    f: impl FnOnce(&[Value<'_>]) -> std::result::Result<R, usertrace::Error>,
) -> Result<R> {
    let mut storage = [Value::U8(0); N];
    let n = values::decode(fields, buf, &mut storage)?;
    Ok(f(&storage[..n])?)
}

/// Unregisters (if needed) and frees; called once, by the Cleaner.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_internal_Native_free0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        if handle != 0 {
            // SAFETY: see the module docs: this is the one free of the box.
            // DynamicTracepoint's Drop unregisters first, or leaks the word
            // if the kernel refuses, so the kernel never writes freed memory.
            drop(unsafe { Box::from_raw(handle as usize as *mut DynamicTracepoint) });
        }
        Ok(())
    })
    .resolve::<Throw>()
}

//! Values given to an emit: `usertrace_value`, a tagged union made by the
//! header's inline constructors (`usertrace_u32(x)`, `usertrace_str(s)`…).
//!
//! Converting one is a `match` on its tag: no format string, no
//! allocation. Strings are written straight from the caller's memory.
//!
//! # Safety
//! The values are the caller's: an array valid for the count it gives, and
//! in each, the member its tag names, with string and bytes pointers valid
//! for their length (or up to a NUL) for as long as the emit.
#![allow(unsafe_code)]

use std::ffi::{c_void, CStr};

use ut::Value;

use crate::error::{non_null, Failure};
use crate::field::*;

/// `usertrace_value.len` of a string whose length is found by `strlen`.
pub const USERTRACE_LEN_NUL_TERMINATED: u32 = u32::MAX;

/// The payload of a `usertrace_value`.
/// cbindgen:field-names=[u, i, f32, f64, ptr]
#[repr(C)]
#[derive(Clone, Copy)]
pub union usertrace_value_data {
    /// Unsigned integers and bool.
    pub u: u64,
    /// Signed integers.
    pub i: i64,
    pub f32_: f32,
    pub f64_: f64,
    /// Strings and bytes.
    pub ptr: *const c_void,
}

/// One value of an emit, in field order. `type` is a `USERTRACE_TYPE_*`;
/// `len` the length of a string or bytes value (for a string,
/// `USERTRACE_LEN_NUL_TERMINATED` means up to its NUL).
/// cbindgen:field-names=[type, len, as]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct usertrace_value {
    pub type_: usertrace_type,
    pub len: u32,
    pub as_: usertrace_value_data,
}

/// Converts the `count` C values at `values` into the core's, on the stack,
/// and hands them to `write` (an emit), whose result it returns.
///
/// # Safety
/// `values` valid for `count` elements; pointers inside string and bytes
/// values valid for their length (or NUL-terminated).
#[inline]
pub(crate) unsafe fn with_values<R>(
    values: *const usertrace_value,
    count: usize,
    write: impl FnOnce(&[Value<'_>]) -> Result<R, ut::Error>,
) -> Result<R, Failure> {
    if count > USERTRACE_MAX_FIELDS {
        return Err(Failure::Invalid(format!("{count} values given; an event has at most {USERTRACE_MAX_FIELDS} fields")));
    }
    let values: &[usertrace_value] = if count == 0 {
        &[]
    } else {
        let values = non_null(values, "values")?;
        // SAFETY: not NULL, and "`values` valid for `count` elements"; the
        // caller does not write them during the call.
        unsafe { std::slice::from_raw_parts(values, count) }
    };
    let mut converted = [Value::U8(0); USERTRACE_MAX_FIELDS];
    // SAFETY: convert needs what this function was promised, for as long
    // as the values it makes live: they do not outlive `write`.
    unsafe { convert(values, &mut converted) }?;
    Ok(write(&converted[..count])?)
}

/// Converts C values into the core's, in `out`.
///
/// # Safety
/// As `with_values`, for as long as `'a`.
#[inline]
unsafe fn convert<'a>(values: &[usertrace_value], out: &mut [Value<'a>]) -> Result<(), Failure> {
    for (v, slot) in values.iter().zip(out.iter_mut()) {
        // Each union read below reads the member its tag names, which the
        // header's constructors (`usertrace_u32(x)`…) write whole; a value
        // built by hand must do the same (`type` says which member is set).
        // Every member is plain data.
        *slot = match v.type_ {
            // SAFETY: the tag names `u`.
            USERTRACE_TYPE_U8 => Value::U8(unsafe { v.as_.u } as u8),
            // SAFETY: the tag names `u`.
            USERTRACE_TYPE_U16 => Value::U16(unsafe { v.as_.u } as u16),
            // SAFETY: the tag names `u`.
            USERTRACE_TYPE_U32 => Value::U32(unsafe { v.as_.u } as u32),
            // SAFETY: the tag names `u`.
            USERTRACE_TYPE_U64 => Value::U64(unsafe { v.as_.u }),
            // SAFETY: the tag names `i`.
            USERTRACE_TYPE_I8 => Value::I8(unsafe { v.as_.i } as i8),
            // SAFETY: the tag names `i`.
            USERTRACE_TYPE_I16 => Value::I16(unsafe { v.as_.i } as i16),
            // SAFETY: the tag names `i`.
            USERTRACE_TYPE_I32 => Value::I32(unsafe { v.as_.i } as i32),
            // SAFETY: the tag names `i`.
            USERTRACE_TYPE_I64 => Value::I64(unsafe { v.as_.i }),
            // SAFETY: the tag names `u`.
            USERTRACE_TYPE_BOOL => Value::Bool(unsafe { v.as_.u } != 0),
            // SAFETY: the tag names `f32_`.
            USERTRACE_TYPE_F32 => Value::F32(unsafe { v.as_.f32_ }),
            // SAFETY: the tag names `f64_`.
            USERTRACE_TYPE_F64 => Value::F64(unsafe { v.as_.f64_ }),
            // SAFETY: "pointers inside string and bytes values valid for
            // their length (or NUL-terminated)", for as long as `'a`.
            USERTRACE_TYPE_STR | USERTRACE_TYPE_CHARS => Value::Str(unsafe { string(v) }?),
            // SAFETY: as above.
            USERTRACE_TYPE_BYTES => Value::Bytes(unsafe { bytes(v) }?),
            other => return Err(Failure::Invalid(format!("value of unknown type {other}"))),
        };
    }
    Ok(())
}

/// The string value `v`.
///
/// # Safety
/// `v.as_.ptr` NULL, or valid for `v.len` bytes (up to its NUL for
/// `USERTRACE_LEN_NUL_TERMINATED`) and unchanged for as long as `'a`.
unsafe fn string<'a>(v: &usertrace_value) -> Result<&'a str, Failure> {
    // SAFETY: a string's tag names `ptr`, the member its constructor sets.
    let p = unsafe { v.as_.ptr };
    if p.is_null() {
        return Err(Failure::Null("string value"));
    }
    let bytes = if v.len == USERTRACE_LEN_NUL_TERMINATED {
        // SAFETY: not NULL, and "up to its NUL" for as long as `'a`.
        unsafe { CStr::from_ptr(p.cast()) }.to_bytes()
    } else {
        // SAFETY: not NULL, and "valid for `v.len` bytes" for `'a`.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), v.len as usize) }
    };
    // Validation, not parsing: the core's Value::Str is UTF-8 by contract.
    std::str::from_utf8(bytes).map_err(|_| Failure::Invalid("a string value is not UTF-8; use a bytes field".into()))
}

/// The bytes value `v`.
///
/// # Safety
/// `v.as_.ptr` NULL, or valid for `v.len` bytes, unchanged for `'a`.
unsafe fn bytes<'a>(v: &usertrace_value) -> Result<&'a [u8], Failure> {
    // SAFETY: a bytes value's tag names `ptr`, the member its constructor sets.
    let p = unsafe { v.as_.ptr };
    if v.len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::Null("bytes value"));
    }
    // SAFETY: not NULL, and "valid for `v.len` bytes, unchanged for `'a`".
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), v.len as usize) })
}

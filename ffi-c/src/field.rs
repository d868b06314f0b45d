//! Field declarations: `usertrace_field`, and their conversion to the core's.
//!
//! # Safety
//! Reads the caller's field array, of the count it gives, and C strings
//! it promises are NUL-terminated; nothing read is kept (names are copied).
#![allow(unsafe_code)]

use std::ffi::{c_char, CStr};

use ut::{Field, FieldType};

use crate::error::Failure;

/// The type of a field, and of a value (`usertrace_value.type`). The
/// numbers are the core's `FieldType::code()`, asserted below.
pub type usertrace_type = u32;
pub const USERTRACE_TYPE_U8: usertrace_type = 1;
pub const USERTRACE_TYPE_U16: usertrace_type = 2;
pub const USERTRACE_TYPE_U32: usertrace_type = 3;
pub const USERTRACE_TYPE_U64: usertrace_type = 4;
pub const USERTRACE_TYPE_I8: usertrace_type = 5;
pub const USERTRACE_TYPE_I16: usertrace_type = 6;
pub const USERTRACE_TYPE_I32: usertrace_type = 7;
pub const USERTRACE_TYPE_I64: usertrace_type = 8;
/// `unsigned char`, 0 or 1.
pub const USERTRACE_TYPE_BOOL: usertrace_type = 9;
/// IEEE-754 bits (`struct f32 NAME 4`; perf prints the bits as an integer).
pub const USERTRACE_TYPE_F32: usertrace_type = 10;
pub const USERTRACE_TYPE_F64: usertrace_type = 11;
/// `char[len]`: fixed size, zero-padded. Takes string or bytes values.
pub const USERTRACE_TYPE_CHARS: usertrace_type = 12;
/// A string of any length (`__rel_loc char[]`), UTF-8 without NUL inside.
pub const USERTRACE_TYPE_STR: usertrace_type = 13;
/// Bytes of any length (`__rel_loc u8[]`).
pub const USERTRACE_TYPE_BYTES: usertrace_type = 14;

// cbindgen needs literals; the core owns the numbering.
const _: () = {
    assert!(USERTRACE_TYPE_U8 == FieldType::U8.code());
    assert!(USERTRACE_TYPE_U16 == FieldType::U16.code());
    assert!(USERTRACE_TYPE_U32 == FieldType::U32.code());
    assert!(USERTRACE_TYPE_U64 == FieldType::U64.code());
    assert!(USERTRACE_TYPE_I8 == FieldType::I8.code());
    assert!(USERTRACE_TYPE_I16 == FieldType::I16.code());
    assert!(USERTRACE_TYPE_I32 == FieldType::I32.code());
    assert!(USERTRACE_TYPE_I64 == FieldType::I64.code());
    assert!(USERTRACE_TYPE_BOOL == FieldType::Bool.code());
    assert!(USERTRACE_TYPE_F32 == FieldType::F32.code());
    assert!(USERTRACE_TYPE_F64 == FieldType::F64.code());
    assert!(USERTRACE_TYPE_CHARS == FieldType::CharArray(1).code());
    assert!(USERTRACE_TYPE_STR == FieldType::Str.code());
    assert!(USERTRACE_TYPE_BYTES == FieldType::Bytes.code());
    assert!(FieldType::TABLE.len() == 14, "a new field type needs its USERTRACE_TYPE_ constant");
};

/// Most fields an event may have.
pub const USERTRACE_MAX_FIELDS: usize = 32;
const _: () = assert!(USERTRACE_MAX_FIELDS == ut::MAX_FIELDS);

/// One field of an event: its name (`[A-Za-z0-9_]+`), its type, and for
/// `USERTRACE_TYPE_CHARS` its length (else 0). Declare them with the
/// `USERTRACE_FIELD_*` macros.
/// cbindgen:field-names=[name, type, len]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct usertrace_field {
    pub name: *const c_char,
    pub type_: usertrace_type,
    pub len: u32,
}

/// The core's fields for the `count` C fields at `fields` of `event`.
///
/// # Safety
/// `fields` valid for `count` elements, each `name` NULL or a C string.
pub(crate) unsafe fn convert(event: &str, fields: *const usertrace_field, count: usize) -> Result<Vec<Field>, Failure> {
    // Before anything is read or allocated: a garbage count is an error,
    // not a huge read or an out-of-memory abort.
    ut::check_field_count(event, count)?;
    if count == 0 {
        return Ok(Vec::new());
    }
    if fields.is_null() {
        return Err(Failure::Null("fields"));
    }
    // SAFETY: not NULL, and "`fields` valid for `count` elements".
    let fields = unsafe { std::slice::from_raw_parts(fields, count) };
    // SAFETY: "each `name` NULL or a C string".
    fields.iter().map(|f| unsafe { convert_one(event, f) }).collect()
}

/// The core's field for `f`.
///
/// # Safety
/// `f.name` NULL or a C string.
unsafe fn convert_one(event: &str, f: &usertrace_field) -> Result<Field, Failure> {
    if f.name.is_null() {
        return Err(Failure::Null("field name"));
    }
    // SAFETY: not NULL, so "a C string"; read only during this call.
    let name = unsafe { CStr::from_ptr(f.name) };
    let name = name.to_str().map_err(|_| Failure::Invalid(format!("field name {name:?} is not UTF-8")))?;
    // Lengths the core refuses (0, > 1024) are reported by its validation.
    let ty = FieldType::from_code(f.type_, f.len).ok_or_else(|| ut::Error::UnknownFieldType {
        event: event.to_owned(),
        field: name.to_owned(),
        given: format!("number {}", f.type_),
    })?;
    Ok(Field::owned(name, ty))
}

/// A C string argument as `&str`.
///
/// # Safety
/// `s` NULL or a valid C string that outlives the result.
pub(crate) unsafe fn str_arg<'a>(s: *const c_char, what: &'static str) -> Result<&'a str, Failure> {
    if s.is_null() {
        return Err(Failure::Null(what));
    }
    // SAFETY: not NULL, so "a valid C string that outlives the result".
    unsafe { CStr::from_ptr(s) }.to_str().map_err(|_| Failure::Invalid(format!("{what} is not UTF-8")))
}

/// A C string for a message, whatever its bytes; `(NULL)` for NULL.
///
/// # Safety
/// `s` NULL or a valid C string.
pub(crate) unsafe fn lossy(s: *const c_char) -> String {
    if s.is_null() {
        return "(NULL)".to_owned();
    }
    // SAFETY: not NULL, so "a valid C string"; copied before returning.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

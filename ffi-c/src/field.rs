//! Field declarations: `usertrace_field`, and their conversion to the core's.

use std::ffi::{c_char, CStr};

use ut::{Field, FieldType};

use crate::error::Failure;

/// The type of a field, and of a value (`usertrace_value.type`).
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

/// The core's fields for `count` C fields at `fields`.
///
/// # Safety
/// `fields` valid for `count` elements, each `name` NULL or a C string.
pub(crate) unsafe fn convert(fields: *const usertrace_field, count: usize) -> Result<Vec<Field>, Failure> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if fields.is_null() {
        return Err(Failure::Null("fields"));
    }
    if count > USERTRACE_MAX_FIELDS {
        // Let the core word the error (it is a format error, not a bad pointer).
        return Err(ut::format_string("event", &vec![Field::new("f", FieldType::U8); count]).unwrap_err().into());
    }
    let fields = std::slice::from_raw_parts(fields, count);
    fields.iter().map(|f| convert_one(f)).collect()
}

unsafe fn convert_one(f: &usertrace_field) -> Result<Field, Failure> {
    if f.name.is_null() {
        return Err(Failure::Null("field name"));
    }
    let name = CStr::from_ptr(f.name)
        .to_str()
        .map_err(|_| Failure::Invalid(format!("field name {:?} is not UTF-8", CStr::from_ptr(f.name))))?;
    let ty = match f.type_ {
        USERTRACE_TYPE_U8 => FieldType::U8,
        USERTRACE_TYPE_U16 => FieldType::U16,
        USERTRACE_TYPE_U32 => FieldType::U32,
        USERTRACE_TYPE_U64 => FieldType::U64,
        USERTRACE_TYPE_I8 => FieldType::I8,
        USERTRACE_TYPE_I16 => FieldType::I16,
        USERTRACE_TYPE_I32 => FieldType::I32,
        USERTRACE_TYPE_I64 => FieldType::I64,
        USERTRACE_TYPE_BOOL => FieldType::Bool,
        USERTRACE_TYPE_F32 => FieldType::F32,
        USERTRACE_TYPE_F64 => FieldType::F64,
        // Lengths the core rejects (0, > 1024) are reported by its validation.
        USERTRACE_TYPE_CHARS => FieldType::CharArray(f.len.min(u32::from(u16::MAX)) as u16),
        USERTRACE_TYPE_STR => FieldType::Str,
        USERTRACE_TYPE_BYTES => FieldType::Bytes,
        other => return Err(Failure::Invalid(format!("field {name} has unknown type {other}"))),
    };
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
    CStr::from_ptr(s).to_str().map_err(|_| Failure::Invalid(format!("{what} is not UTF-8")))
}

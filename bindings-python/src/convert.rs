//! Python values to field values, with errors that name the field.
//!
//! Integers take anything with `__index__` (so `bool` and NumPy integers
//! too) and raise `OverflowError` outside the field's range. `bool` fields
//! take only `bool`. Floats take `float` and `int`; an `f32` field raises
//! `OverflowError` for a finite value beyond its range. `str` fields take
//! `str`: each lone surrogate (which UTF-8 cannot encode) is written as
//! U+FFFD. `bytes` fields take `bytes` and `bytearray`. Anything else is a
//! `TypeError`.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyUnicodeEncodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyString};
use usertrace::{Field, FieldType, Value};

/// One converted value, holding what its bytes borrow from.
pub(crate) enum Arg<'py> {
    Scalar(Value<'static>),
    /// The UTF-8 encoding of a `str` (valid UTF-8 by construction).
    Utf8(Bound<'py, PyBytes>),
    Bytes(Bound<'py, PyBytes>),
    OwnedStr(String),
    OwnedBytes(Vec<u8>),
}

impl Arg<'_> {
    pub(crate) fn value(&self) -> Value<'_> {
        match self {
            Arg::Scalar(v) => *v,
            Arg::Utf8(b) => match std::str::from_utf8(b.as_bytes()) {
                Ok(s) => Value::Str(s),
                // Unreachable (CPython's encoder wrote it); never panic.
                Err(_) => Value::Str(""),
            },
            Arg::Bytes(b) => Value::Bytes(b.as_bytes()),
            Arg::OwnedStr(s) => Value::Str(s),
            Arg::OwnedBytes(b) => Value::Bytes(b),
        }
    }
}

fn type_error(event: &str, field: &Field, obj: &Bound<'_, PyAny>) -> PyErr {
    let got = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!(
        "field {} of event {event} is {}, but a value of type {got} was given",
        field.name,
        field.ty.declared_name()
    ))
}

fn overflow_error(event: &str, field: &Field, obj: &Bound<'_, PyAny>, range: &str) -> PyErr {
    let shown = obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "the value".into());
    let shown = if shown.len() > 60 { format!("{}...", &shown[..shown.floor_char_boundary_compat(57)]) } else { shown };
    PyOverflowError::new_err(format!(
        "field {} of event {event} is {} ({range}), but {shown} is out of range",
        field.name,
        field.ty.declared_name()
    ))
}

/// `str::floor_char_boundary` is unstable; this is the same for our use.
trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, index: usize) -> usize;
}

impl FloorCharBoundary for String {
    fn floor_char_boundary_compat(&self, mut index: usize) -> usize {
        while index > 0 && !self.is_char_boundary(index) {
            index -= 1;
        }
        index
    }
}

macro_rules! int {
    ($event:expr, $field:expr, $obj:expr, $t:ty, $variant:ident) => {
        match $obj.extract::<$t>() {
            Ok(v) => Ok(Arg::Scalar(Value::$variant(v))),
            Err(e) if e.is_instance_of::<PyOverflowError>($obj.py()) => Err(overflow_error(
                $event,
                $field,
                $obj,
                &format!("{} to {}", <$t>::MIN, <$t>::MAX),
            )),
            Err(_) => Err(type_error($event, $field, $obj)),
        }
    };
}

/// Converts `obj` for `field` of `event`.
pub(crate) fn convert<'py>(event: &str, field: &Field, obj: &Bound<'py, PyAny>) -> PyResult<Arg<'py>> {
    match field.ty {
        FieldType::U8 => int!(event, field, obj, u8, U8),
        FieldType::U16 => int!(event, field, obj, u16, U16),
        FieldType::U32 => int!(event, field, obj, u32, U32),
        FieldType::U64 => int!(event, field, obj, u64, U64),
        FieldType::I8 => int!(event, field, obj, i8, I8),
        FieldType::I16 => int!(event, field, obj, i16, I16),
        FieldType::I32 => int!(event, field, obj, i32, I32),
        FieldType::I64 => int!(event, field, obj, i64, I64),
        FieldType::Bool => match obj.cast::<PyBool>() {
            Ok(b) => Ok(Arg::Scalar(Value::Bool(b.is_true()))),
            Err(_) => Err(type_error(event, field, obj)),
        },
        FieldType::F32 | FieldType::F64 => {
            if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
                return Err(type_error(event, field, obj));
            }
            let v = match obj.extract::<f64>() {
                Ok(v) => v,
                Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
                    return Err(overflow_error(event, field, obj, "a float"))
                }
                Err(_) => return Err(type_error(event, field, obj)),
            };
            if field.ty == FieldType::F64 {
                return Ok(Arg::Scalar(Value::F64(v)));
            }
            let narrow = v as f32;
            if v.is_finite() && narrow.is_infinite() {
                return Err(overflow_error(event, field, obj, "at most 3.4028235e38 in magnitude"));
            }
            Ok(Arg::Scalar(Value::F32(narrow)))
        }
        FieldType::Str => string(event, field, obj),
        FieldType::Bytes => bytes(event, field, obj),
        FieldType::CharArray(_) => {
            if obj.is_instance_of::<PyString>() {
                string(event, field, obj)
            } else {
                bytes(event, field, obj)
            }
        }
    }
}

fn string<'py>(event: &str, field: &Field, obj: &Bound<'py, PyAny>) -> PyResult<Arg<'py>> {
    let Ok(s) = obj.cast::<PyString>() else { return Err(type_error(event, field, obj)) };
    match s.encode_utf8() {
        Ok(utf8) => Ok(Arg::Utf8(utf8)),
        Err(e) if e.is_instance_of::<PyUnicodeEncodeError>(obj.py()) => Ok(Arg::OwnedStr(replace_surrogates(s)?)),
        Err(e) => Err(e),
    }
}

fn bytes<'py>(event: &str, field: &Field, obj: &Bound<'py, PyAny>) -> PyResult<Arg<'py>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Arg::Bytes(b.clone()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Arg::OwnedBytes(b.to_vec()));
    }
    Err(type_error(event, field, obj))
}

/// The string with each lone surrogate replaced by U+FFFD.
fn replace_surrogates(s: &Bound<'_, PyString>) -> PyResult<String> {
    // "surrogatepass" writes each surrogate as the 3 bytes ED A0..BF xx.
    let raw = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
    let raw = raw.cast::<PyBytes>().map_err(|_| PyValueError::new_err("str.encode returned no bytes"))?;
    let raw = raw.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == 0xED && i + 2 < raw.len() && raw.get(i + 1).is_some_and(|b| b & 0xE0 == 0xA0) {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

//! Values given to an emit, one per field.

/// One field's value. Borrowed data is written straight from where it lies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// For a [`FieldType::U8`](crate::FieldType::U8) field.
    U8(u8),
    /// For a [`FieldType::U16`](crate::FieldType::U16) field.
    U16(u16),
    /// For a [`FieldType::U32`](crate::FieldType::U32) field.
    U32(u32),
    /// For a [`FieldType::U64`](crate::FieldType::U64) field.
    U64(u64),
    /// For a [`FieldType::I8`](crate::FieldType::I8) field.
    I8(i8),
    /// For a [`FieldType::I16`](crate::FieldType::I16) field.
    I16(i16),
    /// For a [`FieldType::I32`](crate::FieldType::I32) field.
    I32(i32),
    /// For a [`FieldType::I64`](crate::FieldType::I64) field.
    I64(i64),
    /// For a [`FieldType::Bool`](crate::FieldType::Bool) field.
    Bool(bool),
    /// For a [`FieldType::F32`](crate::FieldType::F32) field.
    F32(f32),
    /// For a [`FieldType::F64`](crate::FieldType::F64) field.
    F64(f64),
    /// For a [`FieldType::Str`](crate::FieldType::Str) field, or a `char[N]`
    /// one; must not contain NUL.
    Str(&'a str),
    /// For a [`FieldType::Bytes`](crate::FieldType::Bytes) field, or a `char[N]` one.
    Bytes(&'a [u8]),
}

impl Value<'_> {
    /// The value's type as error messages name it: `u32`, `string`, `bytes`...
    pub const fn type_name(&self) -> &'static str {
        match self {
            Value::U8(_) => "u8",
            Value::U16(_) => "u16",
            Value::U32(_) => "u32",
            Value::U64(_) => "u64",
            Value::I8(_) => "i8",
            Value::I16(_) => "i16",
            Value::I32(_) => "i32",
            Value::I64(_) => "i64",
            Value::Bool(_) => "bool",
            Value::F32(_) => "f32",
            Value::F64(_) => "f64",
            Value::Str(_) => "string",
            Value::Bytes(_) => "bytes",
        }
    }
}

/// Rust types that are a field value, and so may appear in the
/// [`tracepoints!`](crate::tracepoints) macro.
pub trait ToValue {
    /// The field type this Rust type is declared as.
    const FIELD_TYPE: crate::FieldType;
    /// The value to write, borrowing `self` where it can.
    fn to_value(&self) -> Value<'_>;
}

macro_rules! to_value {
    ($($t:ty => $variant:ident, $ft:ident;)*) => {$(
        impl ToValue for $t {
            const FIELD_TYPE: crate::FieldType = crate::FieldType::$ft;
            #[inline]
            fn to_value(&self) -> Value<'_> {
                Value::$variant(*self)
            }
        }
    )*};
}

to_value! {
    u8 => U8, U8;
    u16 => U16, U16;
    u32 => U32, U32;
    u64 => U64, U64;
    i8 => I8, I8;
    i16 => I16, I16;
    i32 => I32, I32;
    i64 => I64, I64;
    bool => Bool, Bool;
    f32 => F32, F32;
    f64 => F64, F64;
}

impl ToValue for &str {
    const FIELD_TYPE: crate::FieldType = crate::FieldType::Str;
    #[inline]
    fn to_value(&self) -> Value<'_> {
        Value::Str(self)
    }
}

/// A `char[N]` field: N bytes, written as they are (zero-pad short text
/// yourself). N must be 1 to 1024, the kernel's limit, checked at compile
/// time where the field is declared.
impl<const N: usize> ToValue for [u8; N] {
    const FIELD_TYPE: crate::FieldType = {
        assert!(N >= 1 && N <= crate::abi::MAX_CHAR_ARRAY_LEN, "usertrace: a char[N] field needs N from 1 to 1024");
        crate::FieldType::CharArray(N as u16)
    };
    #[inline]
    fn to_value(&self) -> Value<'_> {
        Value::Bytes(self)
    }
}

/// A `char[N]` field given by reference, as `[u8; N]`.
impl<const N: usize> ToValue for &[u8; N] {
    const FIELD_TYPE: crate::FieldType = <[u8; N] as ToValue>::FIELD_TYPE;
    #[inline]
    fn to_value(&self) -> Value<'_> {
        Value::Bytes(*self)
    }
}

impl ToValue for &[u8] {
    const FIELD_TYPE: crate::FieldType = crate::FieldType::Bytes;
    #[inline]
    fn to_value(&self) -> Value<'_> {
        Value::Bytes(self)
    }
}

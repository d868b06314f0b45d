//! Field types, and the `name field;field` format string the kernel parses.
//!
//! # Encoding
//! Integers are native-endian at fixed offsets. Strings are `__rel_loc
//! char[]` (NUL-terminated, as the kernel checks) and byte slices `__rel_loc
//! u8[]`: a 4-byte word holding length and offset, with the data after all
//! fixed fields. Two types have no kernel equivalent and use names that the
//! kernel accepts, perf prints as numbers, and our decoder reads back typed:
//! - `bool` is `unsigned char` (0 or 1); integers of one byte are `u8`/`s8`.
//! - `f32`/`f64` are `struct f32 NAME 4` / `struct f64 NAME 8`, holding the
//!   IEEE-754 bits. perf prints them as the unsigned integer of those bits.

use std::borrow::Cow;

use crate::abi::MAX_CHAR_ARRAY_LEN;

/// The type of one field of an event.
///
/// Each type has one stable number, [`code`](Self::code), shared by every
/// binding: the C constants `USERTRACE_TYPE_*` are asserted against it, and
/// the Python and Java enums are tested against it. Never renumber.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// Unsigned 8-bit integer (`u8`).
    U8,
    /// Unsigned 16-bit integer (`u16`).
    U16,
    /// Unsigned 32-bit integer (`u32`).
    U32,
    /// Unsigned 64-bit integer (`u64`).
    U64,
    /// Signed 8-bit integer (`s8`).
    I8,
    /// Signed 16-bit integer (`s16`).
    I16,
    /// Signed 32-bit integer (`s32`).
    I32,
    /// Signed 64-bit integer (`s64`).
    I64,
    /// `unsigned char`, 0 or 1.
    Bool,
    /// IEEE-754 single precision, as `struct f32 NAME 4`.
    F32,
    /// IEEE-754 double precision, as `struct f64 NAME 8`.
    F64,
    /// `char[N]`: a fixed array, zero-padded.
    CharArray(u16),
    /// A UTF-8 string of any length (`__rel_loc char[]`).
    Str,
    /// A byte slice of any length (`__rel_loc u8[]`).
    Bytes,
}

impl FieldType {
    /// Every type with its stable code and the name it is declared by in
    /// Python and in `usertrace list` (`char[N]` for char arrays, with N
    /// given apart). The one table of field types.
    pub const TABLE: [(u32, &'static str); 14] = [
        (1, "u8"),
        (2, "u16"),
        (3, "u32"),
        (4, "u64"),
        (5, "i8"),
        (6, "i16"),
        (7, "i32"),
        (8, "i64"),
        (9, "bool"),
        (10, "f32"),
        (11, "f64"),
        (12, "char[N]"),
        (13, "str"),
        (14, "bytes"),
    ];

    /// The stable number of this type (1 to 14; 0 is never a type, so a
    /// zeroed C struct is caught).
    pub const fn code(self) -> u32 {
        match self {
            FieldType::U8 => 1,
            FieldType::U16 => 2,
            FieldType::U32 => 3,
            FieldType::U64 => 4,
            FieldType::I8 => 5,
            FieldType::I16 => 6,
            FieldType::I32 => 7,
            FieldType::I64 => 8,
            FieldType::Bool => 9,
            FieldType::F32 => 10,
            FieldType::F64 => 11,
            FieldType::CharArray(_) => 12,
            FieldType::Str => 13,
            FieldType::Bytes => 14,
        }
    }

    /// The type with number `code`; `len` is the N of `char[N]` and is
    /// ignored for every other type. `None` for a number that is no type.
    /// (A `char[N]` whose N the kernel refuses is reported when the
    /// definition is checked, with the event and field it belongs to.)
    pub const fn from_code(code: u32, len: u32) -> Option<FieldType> {
        Some(match code {
            1 => FieldType::U8,
            2 => FieldType::U16,
            3 => FieldType::U32,
            4 => FieldType::U64,
            5 => FieldType::I8,
            6 => FieldType::I16,
            7 => FieldType::I32,
            8 => FieldType::I64,
            9 => FieldType::Bool,
            10 => FieldType::F32,
            11 => FieldType::F64,
            // Saturated, so a huge N is refused as too large, not wrapped.
            12 => FieldType::CharArray(if len > u16::MAX as u32 { u16::MAX } else { len as u16 }),
            13 => FieldType::Str,
            14 => FieldType::Bytes,
            _ => return None,
        })
    }

    /// The type declared as `name`: `u8`..`u64`, `i8`..`i64`, `bool`,
    /// `f32`, `f64`, `str`, `bytes`, or `char[N]`.
    pub fn parse(name: &str) -> Option<FieldType> {
        if let Some(n) = name.strip_prefix("char[").and_then(|rest| rest.strip_suffix(']')) {
            // As from C: an N past u16 is kept as "too large", not refused as a bad name.
            let n = n.parse::<u64>().ok()?;
            return FieldType::from_code(12, n.min(u64::from(u32::MAX)) as u32);
        }
        let code = Self::TABLE.iter().find(|(_, n)| *n == name && *n != "char[N]")?.0;
        FieldType::from_code(code, 0)
    }

    /// The name this type is declared by ([`parse`](Self::parse) reads it
    /// back), e.g. `u16`, `str`, `char[16]`.
    pub fn declared_name(self) -> Cow<'static, str> {
        match self {
            FieldType::CharArray(n) => Cow::Owned(format!("char[{n}]")),
            other => Cow::Borrowed(Self::TABLE[other.code() as usize - 1].1),
        }
    }

    /// Bytes the field occupies in the fixed part of the payload.
    pub const fn fixed_size(self) -> usize {
        match self {
            FieldType::U8 | FieldType::I8 | FieldType::Bool => 1,
            FieldType::U16 | FieldType::I16 => 2,
            FieldType::U32 | FieldType::I32 | FieldType::F32 | FieldType::Str | FieldType::Bytes => 4,
            FieldType::U64 | FieldType::I64 | FieldType::F64 => 8,
            FieldType::CharArray(n) => n as usize,
        }
    }

    /// A short name for messages.
    pub const fn name(self) -> &'static str {
        match self {
            FieldType::U8 => "u8",
            FieldType::U16 => "u16",
            FieldType::U32 => "u32",
            FieldType::U64 => "u64",
            FieldType::I8 => "i8",
            FieldType::I16 => "i16",
            FieldType::I32 => "i32",
            FieldType::I64 => "i64",
            FieldType::Bool => "bool",
            FieldType::F32 => "f32",
            FieldType::F64 => "f64",
            FieldType::CharArray(_) => "char array",
            FieldType::Str => "string",
            FieldType::Bytes => "bytes",
        }
    }

    /// Appends the kernel's declaration of a field of this type.
    fn write_declaration(self, name: &str, out: &mut String) {
        use std::fmt::Write;
        let _ = match self {
            FieldType::U8 => write!(out, "u8 {name}"),
            FieldType::U16 => write!(out, "u16 {name}"),
            FieldType::U32 => write!(out, "u32 {name}"),
            FieldType::U64 => write!(out, "u64 {name}"),
            FieldType::I8 => write!(out, "s8 {name}"),
            FieldType::I16 => write!(out, "s16 {name}"),
            FieldType::I32 => write!(out, "s32 {name}"),
            FieldType::I64 => write!(out, "s64 {name}"),
            FieldType::Bool => write!(out, "unsigned char {name}"),
            FieldType::F32 => write!(out, "struct f32 {name} 4"),
            FieldType::F64 => write!(out, "struct f64 {name} 8"),
            FieldType::CharArray(n) => write!(out, "char[{n}] {name}"),
            FieldType::Str => write!(out, "__rel_loc char[] {name}"),
            FieldType::Bytes => write!(out, "__rel_loc u8[] {name}"),
        };
    }
}

/// A named, typed field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// `[A-Za-z0-9_]+`, unique within its event.
    pub name: Cow<'static, str>,
    /// What the field holds.
    pub ty: FieldType,
}

impl Field {
    /// A field with a static name, usable in `static` tracepoints.
    pub const fn new(name: &'static str, ty: FieldType) -> Self {
        Field { name: Cow::Borrowed(name), ty }
    }

    /// A field with a name known only at run time.
    pub fn owned(name: impl Into<String>, ty: FieldType) -> Self {
        Field { name: Cow::Owned(name.into()), ty }
    }
}

/// Most fields one event may have. The kernel's own limit is the 511-byte
/// format; this bound lets emission build its `iovec` array on the stack.
pub const MAX_FIELDS: usize = 32;

/// Whether `name` is a valid event, provider or field name: `[A-Za-z0-9_]+`.
///
/// The kernel does not validate names itself: `:` starts flags and spaces
/// split fields, so anything else would register something unintended.
pub const fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_alphanumeric() || b == b'_') {
            return false;
        }
        i += 1;
    }
    true
}

/// Builds the kernel's `name field;field` string, checking every limit.
/// [`Definition`](super::Definition) is the checked result kept together.
pub fn format_string(event: &str, fields: &[Field]) -> Result<String, crate::Error> {
    use crate::Error;
    super::definition::validate_name("event", event)?;
    check_field_count(event, fields.len())?;
    let mut out = String::with_capacity(64);
    out.push_str(event);
    for (i, field) in fields.iter().enumerate() {
        super::definition::validate_name("field", &field.name)?;
        if fields[..i].iter().any(|f| f.name == field.name) {
            return Err(Error::DuplicateField { event: event.to_owned(), field: field.name.to_string() });
        }
        if let FieldType::CharArray(n) = field.ty {
            if n == 0 {
                return Err(Error::EmptyCharArray { event: event.to_owned(), field: field.name.to_string() });
            }
            if n as usize > MAX_CHAR_ARRAY_LEN {
                return Err(Error::CharArrayTooLarge {
                    event: event.to_owned(),
                    field: field.name.to_string(),
                    len: n as usize,
                    max: MAX_CHAR_ARRAY_LEN,
                });
            }
        }
        out.push_str(if i == 0 { " " } else { ";" });
        field.ty.write_declaration(&field.name, &mut out);
    }
    if out.len() > crate::abi::MAX_NAME_ARGS_LEN {
        return Err(Error::FormatTooLong { event: event.to_owned(), len: out.len(), max: crate::abi::MAX_NAME_ARGS_LEN });
    }
    Ok(out)
}

/// Refuses more than [`MAX_FIELDS`] fields. Callers that are handed a count
/// (the C API) check it before reading that many fields.
pub fn check_field_count(event: &str, count: usize) -> Result<(), crate::Error> {
    if count > MAX_FIELDS {
        return Err(crate::Error::TooManyFields { event: event.to_owned(), count, max: MAX_FIELDS });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Error, ErrorKind};

    #[test]
    fn every_type_has_its_kernel_declaration() {
        let fields = [
            Field::new("a", FieldType::U8),
            Field::new("b", FieldType::I16),
            Field::new("c", FieldType::U32),
            Field::new("d", FieldType::I64),
            Field::new("e", FieldType::Bool),
            Field::new("f", FieldType::F32),
            Field::new("g", FieldType::F64),
            Field::new("h", FieldType::CharArray(16)),
            Field::new("i", FieldType::Str),
            Field::new("j", FieldType::Bytes),
        ];
        assert_eq!(
            format_string("ev", &fields).unwrap(),
            "ev u8 a;s16 b;u32 c;s64 d;unsigned char e;struct f32 f 4;struct f64 g 8;\
             char[16] h;__rel_loc char[] i;__rel_loc u8[] j"
        );
    }

    #[test]
    fn an_event_without_fields_is_just_its_name() {
        assert_eq!(format_string("ping", &[]).unwrap(), "ping");
    }

    #[test]
    fn names_with_colons_spaces_or_nothing_are_refused() {
        for bad in ["", "a:b", "a b", "a;b", "ünï", "a-b"] {
            let err = format_string(bad, &[]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidName, "{bad:?}");
        }
        let err = format_string("ok", &[Field::owned("x y", FieldType::U8)]).unwrap_err();
        assert!(matches!(err, Error::InvalidName { what: "field", .. }));
    }

    #[test]
    fn duplicate_field_names_are_refused_as_such() {
        let err = format_string("ev", &[Field::new("x", FieldType::U8), Field::new("x", FieldType::U16)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::DuplicateField);
        assert_eq!(err.to_string(), "event ev declares field x twice; give each field its own name");
    }

    #[test]
    fn an_empty_char_array_is_refused_as_such() {
        let err = format_string("ev", &[Field::new("c", FieldType::CharArray(0))]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EmptyCharArray);
        assert!(err.to_string().contains("use char[N] with N from 1 to 1024, or a string field"), "{err}");
    }

    #[test]
    fn too_many_fields_names_the_event_and_the_limit() {
        let many: Vec<Field> = (0..40).map(|i| Field::owned(format!("f{i}"), FieldType::U8)).collect();
        let err = format_string("myapp_big", &many).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooManyFields);
        assert_eq!(err.to_string(), "event myapp_big declares 40 fields; at most 32 are supported: split it into several events");
    }

    #[test]
    fn every_type_code_round_trips_and_zero_is_no_type() {
        for (code, name) in FieldType::TABLE {
            let ty = FieldType::from_code(code, 8).unwrap();
            assert_eq!(ty.code(), code);
            if name == "char[N]" {
                assert_eq!(ty, FieldType::CharArray(8));
                assert_eq!(FieldType::parse("char[8]"), Some(ty));
            } else {
                assert_eq!(FieldType::parse(name), Some(ty), "{name}");
                assert_eq!(ty.declared_name(), name);
            }
        }
        assert_eq!(FieldType::from_code(0, 0), None);
        assert_eq!(FieldType::from_code(15, 0), None);
        assert_eq!(FieldType::parse("char[N]"), None);
        assert_eq!(FieldType::parse("string"), None);
        assert_eq!(FieldType::from_code(12, 1 << 20), Some(FieldType::CharArray(u16::MAX)));
    }

    #[test]
    fn limits_are_checked() {
        let many: Vec<Field> = (0..=MAX_FIELDS).map(|i| Field::owned(format!("f{i}"), FieldType::U8)).collect();
        assert!(matches!(format_string("ev", &many), Err(Error::TooManyFields { count: 33, .. })));

        let long: Vec<Field> = (0..20).map(|i| Field::owned(format!("field_with_a_long_name_{i:02}"), FieldType::Str)).collect();
        assert!(matches!(format_string("ev", &long), Err(Error::FormatTooLong { max: 511, .. })));

        let big = [Field::new("x", FieldType::CharArray(1025))];
        assert!(matches!(format_string("ev", &big), Err(Error::CharArrayTooLarge { len: 1025, .. })));
        let ok = [Field::new("x", FieldType::CharArray(1024))];
        assert!(format_string("ev", &ok).is_ok());
    }

    #[test]
    fn error_messages_say_what_to_do() {
        let msg = format_string("a:b", &[]).unwrap_err().to_string();
        assert!(msg.contains("use only ASCII letters, digits and '_'"), "{msg}");
    }
}

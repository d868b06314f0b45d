//! An event's descriptor, as the shared-memory transport carries it, and
//! the tracefs `format` text a recorder would have read for it.
//!
//! Without user_events, a producer publishes each tracepoint's descriptor,
//! the very `name field;field` string [`format_string`] builds for the
//! kernel, into shared memory. The recorder must then do what the kernel
//! would have done: read the string back ([`parse_descriptor`]) and show
//! the event as tracefs would ([`tracefs_format`]), so that everything
//! downstream of the format text (decoding, the archive, perf) cannot tell
//! the two transports apart.
//!
//! The descriptor comes from another process, so it is hostile input. The
//! parser accepts exactly what [`format_string`] writes and nothing else:
//! a string it accepts is rebuilt byte for byte by [`format_string`], so
//! the recorder never shows an event that the producer could not have
//! declared.
//!
//! References: kernel/trace/trace_events_user.c (`user_event_parse_field`,
//! `user_event_set_print_fmt`) and kernel/trace/trace_events.c (`f_show`),
//! Linux 6.12.

use std::fmt;

use crate::abi::{MAX_CHAR_ARRAY_LEN, MAX_NAME_ARGS_LEN, TRACE_ENTRY_LEN};
#[cfg(doc)]
use crate::producer::format_string;
use crate::producer::{is_valid_name, Field, FieldType, MAX_FIELDS};

/// The `trace_entry` every tracepoint's format starts with, as tracefs
/// shows it, and the blank line that ends it.
pub const COMMON_FIELDS: &str = "\
    \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
    \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
    \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
    \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

/// Most characters of offending text an error quotes.
const QUOTE_MAX: usize = 32;

/// Why a descriptor is not one [`format_string`] could have written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescriptorError {
    /// Longer than the kernel takes (`len` bytes, at most `max`).
    TooLong {
        /// The descriptor's length in bytes.
        len: usize,
        /// [`MAX_NAME_ARGS_LEN`].
        max: usize,
    },
    /// The event name is not `[A-Za-z0-9_]+` (quoted, shortened).
    InvalidEventName {
        /// The name as given, shortened.
        name: String,
    },
    /// More fields than an event may have.
    TooManyFields {
        /// Fields declared.
        count: usize,
        /// [`MAX_FIELDS`].
        max: usize,
    },
    /// Field `index` is empty: a space with nothing after it, or `;;`.
    EmptyField {
        /// The field's position, from 0.
        index: usize,
    },
    /// Field `index` is not one of the declarations the core writes.
    UnknownType {
        /// The field's position, from 0.
        index: usize,
        /// The declaration, shortened.
        declaration: String,
    },
    /// Field `index` is a `char[N]` whose N is not 1 to 1024, written as
    /// the core writes it (decimal, no leading zero).
    BadCharArrayLength {
        /// The field's position, from 0.
        index: usize,
        /// What stood between the brackets, shortened.
        len: String,
    },
    /// Field `index` has a name that is not `[A-Za-z0-9_]+`.
    InvalidFieldName {
        /// The field's position, from 0.
        index: usize,
        /// The name as given, shortened.
        name: String,
    },
    /// Field `index` has the name of an earlier field.
    DuplicateField {
        /// The field's position, from 0.
        index: usize,
        /// The name both fields have.
        name: String,
    },
}

impl fmt::Display for DescriptorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("event descriptor: ")?;
        match self {
            DescriptorError::TooLong { len, max } => write!(f, "{len} bytes long, at most {max} are allowed"),
            DescriptorError::InvalidEventName { name } => {
                write!(f, "event name {name:?} is not made of ASCII letters, digits and '_'")
            }
            DescriptorError::TooManyFields { count, max } => write!(f, "{count} fields, at most {max} are allowed"),
            DescriptorError::EmptyField { index } => write!(f, "field {index} is empty"),
            DescriptorError::UnknownType { index, declaration } => {
                write!(f, "field {index} ({declaration:?}) is not a declaration of any field type")
            }
            DescriptorError::BadCharArrayLength { index, len } => {
                write!(f, "field {index} is char[{len}]; N must be 1 to {MAX_CHAR_ARRAY_LEN}")
            }
            DescriptorError::InvalidFieldName { index, name } => {
                write!(f, "field {index} is named {name:?}, not made of ASCII letters, digits and '_'")
            }
            DescriptorError::DuplicateField { index, name } => {
                write!(f, "field {index} is named {name}, as an earlier field is")
            }
        }
    }
}

impl std::error::Error for DescriptorError {}

/// Reads a descriptor back into the event's name and fields: the inverse
/// of [`format_string`], which rebuilds exactly `text` from what this
/// returns. Anything that function would not write is an error naming
/// the field and the text at fault.
pub fn parse_descriptor(text: &str) -> Result<(String, Vec<Field>), DescriptorError> {
    if text.len() > MAX_NAME_ARGS_LEN {
        return Err(DescriptorError::TooLong { len: text.len(), max: MAX_NAME_ARGS_LEN });
    }
    // The core writes the name, then a space and the fields if there are any.
    let (name, args) = match text.split_once(' ') {
        Some((name, args)) => (name, Some(args)),
        None => (text, None),
    };
    if !is_valid_name(name) {
        return Err(DescriptorError::InvalidEventName { name: quote(name) });
    }
    let Some(args) = args else { return Ok((name.to_owned(), Vec::new())) };
    let count = args.split(';').count();
    if count > MAX_FIELDS {
        return Err(DescriptorError::TooManyFields { count, max: MAX_FIELDS });
    }
    let mut fields: Vec<Field> = Vec::with_capacity(count);
    for (index, declaration) in args.split(';').enumerate() {
        let field = parse_declaration(index, declaration)?;
        if fields.iter().any(|f| f.name == field.name) {
            return Err(DescriptorError::DuplicateField { index, name: field.name.into_owned() });
        }
        fields.push(field);
    }
    Ok((name.to_owned(), fields))
}

/// One `TYPE NAME` as `FieldType::write_declaration` writes it.
fn parse_declaration(index: usize, declaration: &str) -> Result<Field, DescriptorError> {
    if declaration.is_empty() {
        return Err(DescriptorError::EmptyField { index });
    }
    let unknown = || DescriptorError::UnknownType { index, declaration: quote(declaration) };
    const PREFIXED: [(&str, FieldType); 11] = [
        ("u8 ", FieldType::U8),
        ("u16 ", FieldType::U16),
        ("u32 ", FieldType::U32),
        ("u64 ", FieldType::U64),
        ("s8 ", FieldType::I8),
        ("s16 ", FieldType::I16),
        ("s32 ", FieldType::I32),
        ("s64 ", FieldType::I64),
        ("unsigned char ", FieldType::Bool),
        ("__rel_loc char[] ", FieldType::Str),
        ("__rel_loc u8[] ", FieldType::Bytes),
    ];
    let (ty, name) = if let Some((ty, name)) =
        PREFIXED.iter().find_map(|(prefix, ty)| declaration.strip_prefix(prefix).map(|name| (*ty, name)))
    {
        (ty, name)
    } else if let Some(rest) = declaration.strip_prefix("struct f32 ") {
        (FieldType::F32, rest.strip_suffix(" 4").ok_or_else(unknown)?)
    } else if let Some(rest) = declaration.strip_prefix("struct f64 ") {
        (FieldType::F64, rest.strip_suffix(" 8").ok_or_else(unknown)?)
    } else if let Some(rest) = declaration.strip_prefix("char[") {
        let (len, name) = rest.split_once("] ").ok_or_else(unknown)?;
        (FieldType::CharArray(char_array_len(index, len)?), name)
    } else {
        return Err(unknown());
    };
    if !is_valid_name(name) {
        return Err(DescriptorError::InvalidFieldName { index, name: quote(name) });
    }
    Ok(Field::owned(name, ty))
}

/// The N of `char[N]`, written as `{n}` writes a u16 from 1 to 1024.
fn char_array_len(index: usize, len: &str) -> Result<u16, DescriptorError> {
    let bad = || DescriptorError::BadCharArrayLength { index, len: quote(len) };
    // Digits only and no leading zero: `+8` or `08` would parse, but would
    // not be written back the same.
    if len.is_empty() || len.len() > 4 || !len.bytes().all(|b| b.is_ascii_digit()) || len.starts_with('0') {
        return Err(bad());
    }
    match len.parse::<u16>() {
        Ok(n) if (1..=MAX_CHAR_ARRAY_LEN as u16).contains(&n) => Ok(n),
        _ => Err(bad()),
    }
}

/// `text`, cut to [`QUOTE_MAX`] characters (with `...` if it was longer),
/// so an error stays one short line whatever a hostile producer wrote.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_MAX) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// The text of tracefs' `events/<system>/<name>/format` for a user_events
/// event with these fields, as Linux 6.x shows it, with `id` as its `ID:`.
/// The system is not part of the text (it is the directory's name); it is
/// taken so callers say which event they mean.
///
/// As the kernel lays them out, the fields follow the 8-byte
/// `trace_entry` in declaration order with no padding. The `signed:` is
/// the kernel's rule (`type[0] != 'u'`), so `char[N]`, `struct f32` and
/// `__rel_loc` fields print 1. Array types print with an empty bracket
/// after the name (`char c[]`, `__rel_loc char s[]`): 6.12 never sets the
/// array length of a user_events field and prints whatever the memory
/// held, which in a guest recording was zero and is sometimes garbage.
pub fn tracefs_format(_system: &str, name: &str, id: u16, fields: &[Field]) -> String {
    use std::fmt::Write;
    let mut out = format!("name: {name}\nID: {id}\nformat:\n{COMMON_FIELDS}");
    let mut offset = TRACE_ENTRY_LEN;
    for field in fields {
        let size = field.ty.fixed_size();
        let _ = writeln!(
            out,
            "\tfield:{};\toffset:{offset};\tsize:{size};\tsigned:{};",
            shown_declaration(field),
            u8::from(kernel_type(field.ty).as_bytes()[0] != b'u'),
        );
        offset += size;
    }
    out.push_str("\nprint fmt: \"");
    for (i, field) in fields.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        let _ = write!(out, "{sep}{}={}", field.name, print_conversion(field.ty));
    }
    out.push('"');
    for field in fields {
        let _ = match field.ty {
            FieldType::Str => write!(out, ", __get_rel_str({})", field.name),
            _ => write!(out, ", REC->{}", field.name),
        };
    }
    out.push('\n');
    out
}

/// The type as the kernel keeps it: the declaration without the name (and
/// without a struct's size).
fn kernel_type(ty: FieldType) -> &'static str {
    match ty {
        FieldType::U8 => "u8",
        FieldType::U16 => "u16",
        FieldType::U32 => "u32",
        FieldType::U64 => "u64",
        FieldType::I8 => "s8",
        FieldType::I16 => "s16",
        FieldType::I32 => "s32",
        FieldType::I64 => "s64",
        FieldType::Bool => "unsigned char",
        FieldType::F32 => "struct f32",
        FieldType::F64 => "struct f64",
        // The kernel keeps `char[N]`; only the first byte (for `signed:`)
        // and what precedes the bracket are ever shown (see `tracefs_format`).
        FieldType::CharArray(_) => "char[]",
        FieldType::Str => "__rel_loc char[]",
        FieldType::Bytes => "__rel_loc u8[]",
    }
}

/// `f_show`: a type with a bracket prints the part before it, the name,
/// then the bracket with the array length, here 0 and so empty.
fn shown_declaration(field: &Field) -> String {
    let ty = kernel_type(field.ty);
    match ty.strip_suffix("[]") {
        Some(element) => format!("{element} {}[]", field.name),
        None => format!("{ty} {}", field.name),
    }
}

/// `user_field_format`: the conversion the kernel's print fmt uses.
fn print_conversion(ty: FieldType) -> &'static str {
    match ty {
        FieldType::U8 | FieldType::U16 | FieldType::U32 | FieldType::Bool => "%u",
        FieldType::I8 | FieldType::I16 | FieldType::I32 => "%d",
        FieldType::U64 => "%llu",
        FieldType::I64 => "%lld",
        // Any type containing `char[`, the `__rel_loc` string too.
        FieldType::CharArray(_) | FieldType::Str => "%s",
        // "Unknown, likely struct, allowed treat as 64-bit": the floats'
        // structs, and `__rel_loc u8[]`.
        FieldType::F32 | FieldType::F64 | FieldType::Bytes => "%llu",
    }
}

#[cfg(test)]
mod tests;

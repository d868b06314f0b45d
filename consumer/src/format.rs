//! Parsing tracefs' `events/<system>/<name>/format` into field layouts.
//!
//! The kernel writes one `field:TYPE NAME; offset:N; size:N; signed:N;` line
//! per field. Offsets count from the start of the raw record, including the
//! 8-byte `trace_entry` whose `common_*` fields come first; those are parsed
//! and dropped, since perf gives pid and tid separately.
//!
//! user_events on 6.12 prints a garbage array size for `__rel_loc char[]`
//! fields (`__rel_loc char msg[107426720]`), so location fields are
//! recognised by their keyword and the bracket is ignored.

use super::error::FormatError;

/// How a field's bytes are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A native-endian integer of 1, 2, 4 or 8 bytes.
    Int {
        /// Two's complement, as the format's `signed:1` says.
        signed: bool,
    },
    /// `unsigned char`: the core's encoding of `bool` (0 or 1).
    Bool,
    /// `struct f32 NAME 4`: IEEE-754 single bits.
    F32,
    /// `struct f64 NAME 8`: IEEE-754 double bits.
    F64,
    /// `char NAME[N]`: a NUL-padded string in place.
    CharArray,
    /// `__rel_loc`/`__data_loc char[]`: a NUL-terminated string elsewhere.
    LocStr {
        /// `__rel_loc` (offset from the end of the word), not `__data_loc`
        /// (offset from the record start).
        relative: bool,
    },
    /// `__rel_loc`/`__data_loc` of anything else: raw bytes elsewhere.
    LocBytes {
        /// As for [`LocStr`](Self::LocStr).
        relative: bool,
    },
    /// Any other fixed-size field (arrays, unknown structs): raw bytes.
    Bytes,
}

/// One field of an event, as the format file declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatField {
    /// The field's name, without any array bracket.
    pub name: String,
    /// The type as the kernel printed it, e.g. `u32` or `__rel_loc char`.
    pub type_name: String,
    /// Where the field starts, counted from the start of the raw record
    /// (the `trace_entry` included).
    pub offset: usize,
    /// Bytes in the record: 4 for a location word, not its data.
    pub size: usize,
    /// How to read the bytes.
    pub kind: FieldKind,
}

/// The layout of one tracepoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    /// `user_events` or `user_events_multi`.
    pub system: String,
    /// The event's name, e.g. `myapp_request`.
    pub name: String,
    /// The tracepoint id perf wants as `config`.
    pub id: u64,
    /// The event's own fields, without the trace_entry's `common_*`.
    pub fields: Vec<FormatField>,
}

impl EventFormat {
    /// Parses the text of a format file; `system` is the directory it came
    /// from, which the file itself does not name.
    pub fn parse(system: &str, text: &str) -> Result<EventFormat, FormatError> {
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("name:") {
                name = Some(rest.trim().to_owned());
            } else if let Some(rest) = line.strip_prefix("ID:") {
                id = Some(rest.trim().parse::<u64>().map_err(|_| FormatError::MissingId)?);
            } else if line.starts_with("field:") {
                let field = parse_field(line, index + 1)?;
                // The trace_entry's fields are those inside its 8 bytes: a
                // producer's own field may be named `common_x` too (the
                // descriptor fuzz target's first finding).
                if !(field.name.starts_with("common_") && field.offset < usertrace::wire::TRACE_ENTRY_LEN) {
                    fields.push(field);
                }
            }
        }
        Ok(EventFormat {
            system: system.to_owned(),
            name: name.filter(|n| !n.is_empty()).ok_or(FormatError::MissingName)?,
            id: id.ok_or(FormatError::MissingId)?,
            fields,
        })
    }

    /// `system:name`, as perf names tracepoints.
    pub fn full_name(&self) -> String {
        format!("{}:{}", self.system, self.name)
    }
}

fn parse_field(line: &str, line_no: usize) -> Result<FormatField, FormatError> {
    let bad = FormatError::BadField { line: line_no };
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, None);
    for part in line.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once(':').ok_or(bad)?;
        match key.trim() {
            "field" => decl = Some(value.trim()),
            "offset" => offset = Some(value.trim().parse::<usize>().map_err(|_| bad)?),
            "size" => size = Some(value.trim().parse::<usize>().map_err(|_| bad)?),
            "signed" => signed = Some(value.trim() == "1"),
            _ => {}
        }
    }
    let (decl, offset, size, signed) = (decl.ok_or(bad)?, offset.ok_or(bad)?, size.ok_or(bad)?, signed.ok_or(bad)?);
    offset.checked_add(size).ok_or(FormatError::FieldOutOfRange { line: line_no })?;

    // The name is the last word; an array bracket may follow it.
    let (type_name, name_part) = decl.rsplit_once(char::is_whitespace).ok_or(bad)?;
    let type_name = type_name.trim();
    let (name, is_array) = match name_part.split_once('[') {
        Some((name, _)) => (name, true),
        None => (name_part, false),
    };
    if name.is_empty() || type_name.is_empty() {
        return Err(bad);
    }
    let kind = field_kind(type_name, size, signed, is_array);
    Ok(FormatField { name: name.to_owned(), type_name: type_name.to_owned(), offset, size, kind })
}

fn field_kind(type_name: &str, size: usize, signed: bool, is_array: bool) -> FieldKind {
    let loc = if let Some(inner) = type_name.strip_prefix("__rel_loc ") {
        Some((true, inner))
    } else {
        type_name.strip_prefix("__data_loc ").map(|inner| (false, inner))
    };
    if let Some((relative, inner)) = loc {
        // `__data_loc char[] x` may print as `char[]` or `char`.
        let element = inner.trim().trim_end_matches("[]").trim();
        return if size != 4 {
            FieldKind::Bytes
        } else if element == "char" {
            FieldKind::LocStr { relative }
        } else {
            FieldKind::LocBytes { relative }
        };
    }
    if is_array {
        return if type_name == "char" { FieldKind::CharArray } else { FieldKind::Bytes };
    }
    match (type_name, size) {
        ("unsigned char", 1) => FieldKind::Bool,
        ("struct f32", 4) => FieldKind::F32,
        ("struct f64", 8) => FieldKind::F64,
        (t, _) if t.starts_with("struct ") => FieldKind::Bytes,
        (_, 1 | 2 | 4 | 8) => FieldKind::Int { signed },
        _ => FieldKind::Bytes,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_field_of_its_own_named_common_is_kept() {
        let text = "name: ev\nID: 7\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
                    \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
                    \tfield:u32 common_x;\toffset:8;\tsize:4;\tsigned:0;\n";
        let format = EventFormat::parse("user_events", text).unwrap();
        assert_eq!(format.fields.iter().map(|f| (f.name.as_str(), f.offset)).collect::<Vec<_>>(), vec![("common_x", 8)]);
    }

    /// A format as the 6.12 guest prints it for the core's every type.
    pub(crate) const ALL_TYPES: &str = "name: ut_all
ID: 1234
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:u8 a;\toffset:8;\tsize:1;\tsigned:0;
\tfield:s16 b;\toffset:9;\tsize:2;\tsigned:1;
\tfield:u32 c;\toffset:11;\tsize:4;\tsigned:0;
\tfield:s64 d;\toffset:15;\tsize:8;\tsigned:1;
\tfield:unsigned char e;\toffset:23;\tsize:1;\tsigned:0;
\tfield:struct f32 f;\toffset:24;\tsize:4;\tsigned:0;
\tfield:struct f64 g;\toffset:28;\tsize:8;\tsigned:0;
\tfield:char h[4];\toffset:36;\tsize:4;\tsigned:1;
\tfield:__rel_loc char i[107426720];\toffset:40;\tsize:4;\tsigned:1;
\tfield:__rel_loc u8 j[];\toffset:44;\tsize:4;\tsigned:0;

print fmt: \"a=%u\", REC->a
";

    #[test]
    fn every_core_type_gets_its_kind_and_offset() {
        let f = EventFormat::parse("user_events", ALL_TYPES).unwrap();
        assert_eq!((f.name.as_str(), f.id, f.full_name().as_str()), ("ut_all", 1234, "user_events:ut_all"));
        let kinds: Vec<(&str, usize, FieldKind)> = f.fields.iter().map(|x| (x.name.as_str(), x.offset, x.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("a", 8, FieldKind::Int { signed: false }),
                ("b", 9, FieldKind::Int { signed: true }),
                ("c", 11, FieldKind::Int { signed: false }),
                ("d", 15, FieldKind::Int { signed: true }),
                ("e", 23, FieldKind::Bool),
                ("f", 24, FieldKind::F32),
                ("g", 28, FieldKind::F64),
                ("h", 36, FieldKind::CharArray),
                ("i", 40, FieldKind::LocStr { relative: true }),
                ("j", 44, FieldKind::LocBytes { relative: true }),
            ]
        );
    }

    #[test]
    fn data_loc_and_unknown_structs_are_recognised() {
        let text = "name: x\nID: 7\n\tfield:__data_loc char[] s;\toffset:8;\tsize:4;\tsigned:0;\n\
                    \tfield:struct point p 12;\toffset:12;\tsize:12;\tsigned:0;\n";
        let f = EventFormat::parse("user_events", text).unwrap();
        assert_eq!(f.fields[0].kind, FieldKind::LocStr { relative: false });
        assert_eq!(f.fields[1].kind, FieldKind::Bytes);
    }

    #[test]
    fn malformed_formats_are_errors_not_panics() {
        assert_eq!(EventFormat::parse("s", "name: x\n"), Err(FormatError::MissingId));
        assert_eq!(EventFormat::parse("s", "ID: 3\n"), Err(FormatError::MissingName));
        assert_eq!(EventFormat::parse("s", "name: x\nID: nope\n"), Err(FormatError::MissingId));
        for bad in [
            "field:u32;\toffset:8;\tsize:4;\tsigned:0;",
            "field:u32 a;\toffset:x;\tsize:4;\tsigned:0;",
            "field:u32 a;\tsize:4;\tsigned:0;",
            "field:u32 a;\toffset:8;\tsize:4",
            "field:u32 a;\toffset8;\tsize:4;\tsigned:0;",
        ] {
            let text = format!("name: x\nID: 3\n{bad}\n");
            assert_eq!(EventFormat::parse("s", &text), Err(FormatError::BadField { line: 3 }), "{bad}");
        }
        let huge = format!("name: x\nID: 3\nfield:u32 a; offset:{}; size:4; signed:0;\n", usize::MAX);
        assert_eq!(EventFormat::parse("s", &huge), Err(FormatError::FieldOutOfRange { line: 3 }));
    }

    #[test]
    fn any_prefix_of_a_format_parses_or_errs() {
        for end in 0..=ALL_TYPES.len() {
            if ALL_TYPES.is_char_boundary(end) {
                let _ = EventFormat::parse("s", &ALL_TYPES[..end]);
            }
        }
    }
}

//! How every `usertrace` JSON line is printed: serde_json's output with
//! floats and two escapes as `record` has always printed them, so lines
//! stay byte for byte what scripts already parse.

use std::io;

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};

/// Appends `value` as one JSON line (ending in `\n`) to `out`.
pub fn write_json_line(value: &impl Serialize, out: &mut Vec<u8>) {
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, LineFormatter);
    // Writing into a Vec cannot fail, and no type serialized here has a
    // serializer that errors (map keys are strings): ignoring is safe.
    let _ = value.serialize(&mut serializer);
    out.push(b'\n');
}

/// The formatter behind [`write_json_line`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LineFormatter;

impl Formatter for LineFormatter {
    /// Rust's `Display`: the shortest decimal that reads back the same,
    /// never an exponent, `2` rather than `2.0`. (Non-finite values never
    /// get here: they are written as strings.)
    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        write!(writer, "{value}")
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        write!(writer, "{value}")
    }

    /// `\u0008` and `\u000c` rather than `\b` and `\f`: the same JSON, the
    /// same bytes as before serde.
    fn write_char_escape<W: ?Sized + io::Write>(&mut self, writer: &mut W, escape: CharEscape) -> io::Result<()> {
        match escape {
            CharEscape::Backspace => writer.write_all(b"\\u0008"),
            CharEscape::FormFeed => writer.write_all(b"\\u000c"),
            CharEscape::Quote => writer.write_all(b"\\\""),
            CharEscape::ReverseSolidus => writer.write_all(b"\\\\"),
            CharEscape::Solidus => writer.write_all(b"\\/"),
            CharEscape::LineFeed => writer.write_all(b"\\n"),
            CharEscape::CarriageReturn => writer.write_all(b"\\r"),
            CharEscape::Tab => writer.write_all(b"\\t"),
            CharEscape::AsciiControl(byte) => write!(writer, "\\u{byte:04x}"),
        }
    }
}

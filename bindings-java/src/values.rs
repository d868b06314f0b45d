//! Decodes the values Java wrote into its per-thread direct buffer.
//!
//! Java (`internal/Encoder.java`) writes one entry per field, in order, in
//! native byte order: integers, bools and floats at their field's width, and
//! strings and byte arrays as a `u32` length then the bytes (UTF-8 for
//! strings, without a NUL). Nothing is checked here but the framing: the
//! core checks the values (NUL bytes, `char[N]` lengths, the payload's
//! size) as it does for every binding. The values borrow the buffer, and the core's
//! `writev` points into it: nothing is copied on this side.

use usertrace::{Field, FieldType, Value};

use crate::boundary::{Failure, Result};

/// Fills `out` with one value per field, borrowing `buf`; returns how many.
/// `out` holds at least as many values as there are fields (else the
/// buffer's last values are left over, an error).
pub(crate) fn decode<'a>(fields: &[Field], buf: &'a [u8], out: &mut [Value<'a>]) -> Result<usize> {
    let mut reader = Reader { buf, pos: 0 };
    for (slot, field) in out.iter_mut().zip(fields) {
        *slot = match field.ty {
            FieldType::U8 => Value::U8(reader.array::<1>(field)?[0]),
            FieldType::I8 => Value::I8(reader.array::<1>(field)?[0] as i8),
            FieldType::Bool => Value::Bool(reader.array::<1>(field)?[0] != 0),
            FieldType::U16 => Value::U16(u16::from_ne_bytes(reader.array(field)?)),
            FieldType::I16 => Value::I16(i16::from_ne_bytes(reader.array(field)?)),
            FieldType::U32 => Value::U32(u32::from_ne_bytes(reader.array(field)?)),
            FieldType::I32 => Value::I32(i32::from_ne_bytes(reader.array(field)?)),
            FieldType::F32 => Value::F32(f32::from_ne_bytes(reader.array(field)?)),
            FieldType::U64 => Value::U64(u64::from_ne_bytes(reader.array(field)?)),
            FieldType::I64 => Value::I64(i64::from_ne_bytes(reader.array(field)?)),
            FieldType::F64 => Value::F64(f64::from_ne_bytes(reader.array(field)?)),
            FieldType::Str => {
                let bytes = reader.sized(field)?;
                let s = std::str::from_utf8(bytes).map_err(|_| corrupt(field))?;
                Value::Str(s)
            }
            // A char[N] takes a String's UTF-8 or a byte[] alike: the core
            // lays out both the same, and checks the length.
            FieldType::CharArray(_) | FieldType::Bytes => Value::Bytes(reader.sized(field)?),
        };
    }
    if reader.pos != buf.len() {
        return Err(Failure::IllegalArgument(format!(
            "usertrace: {} bytes left over after the last field: the jar and the native library disagree",
            buf.len() - reader.pos
        )));
    }
    Ok(fields.len().min(out.len()))
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, field: &Field) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(|| corrupt(field))?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, field: &Field) -> Result<[u8; N]> {
        Ok(self.take(N, field)?.try_into().expect("take returns N bytes"))
    }

    fn sized(&mut self, field: &Field) -> Result<&'a [u8]> {
        let len = u32::from_ne_bytes(self.array(field)?) as usize;
        self.take(len, field)
    }
}

fn corrupt(field: &Field) -> Failure {
    Failure::IllegalArgument(format!(
        "usertrace: the encoded value of field {} is malformed: the jar and the native library disagree",
        field.name
    ))
}

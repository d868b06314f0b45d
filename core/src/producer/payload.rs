//! Lays out one event as `iovec`s and writes it with a single `writev`.
//!
//! Nothing is copied or allocated: each `iovec` points at the caller's value,
//! a stack-held `__rel_loc` word, or a static run of zeros. The layout is the
//! kernel's: the 4-byte write index, every fixed-size field in declaration
//! order, then the variable-length data of strings and byte slices.

use std::mem::MaybeUninit;
use std::os::fd::RawFd;

use super::field::{Field, FieldType, MAX_FIELDS};
use super::value::Value;
use crate::abi::{dyn_loc, MAX_CHAR_ARRAY_LEN, MAX_PAYLOAD_LEN};
use crate::sys::{self, Errno};
use crate::Error;


static ZEROS: [u8; MAX_CHAR_ARRAY_LEN] = [0; MAX_CHAR_ARRAY_LEN];

/// Writes one event. `EBADF` (the last tracer detached after the caller saw
/// the bit) is success: the event had nobody to go to.
pub(crate) fn write_event(
    fd: RawFd,
    write_index: u32,
    event: &str,
    fields: &[Field],
    values: &[Value<'_>],
) -> Result<(), Error> {
    // The compiler zero-fills stack arrays even when they are left
    // uninitialised, so the array is sized to the event: most have few fields.
    match fields.len() {
        0..=4 => write_with::<{ iovecs_for(4) }>(fd, write_index, event, fields, values),
        5..=8 => write_with::<{ iovecs_for(8) }>(fd, write_index, event, fields, values),
        9..=16 => write_with::<{ iovecs_for(16) }>(fd, write_index, event, fields, values),
        _ => write_with::<{ iovecs_for(MAX_FIELDS) }>(fd, write_index, event, fields, values),
    }
}

/// One for the index; a fixed field takes one (two for a padded char array);
/// a variable field takes one more for its data and one for its NUL.
const fn iovecs_for(fields: usize) -> usize {
    1 + 4 * fields
}

fn write_with<const N: usize>(
    fd: RawFd,
    write_index: u32,
    event: &str,
    fields: &[Field],
    values: &[Value<'_>],
) -> Result<(), Error> {
    let index_bytes = write_index.to_ne_bytes();
    let mut locs = [0u32; MAX_FIELDS];
    // Built in place: returning the iovecs by value would copy them.
    let mut iov = IovecArray::<N>::new();
    lay_out(&mut iov, &index_bytes, &mut locs, event, fields, values)?;
    match sys::writev(fd, iov.as_slice()) {
        Ok(_) | Err(Errno(libc::EBADF)) => Ok(()),
        Err(errno) => Err(Error::Kernel { op: "write", event: event.to_owned(), errno }),
    }
}

/// Checks `values` against `fields` as every emit does; returns the
/// payload's length. [`Definition::validate`](super::Definition::validate)
/// is this check without the write.
pub(crate) fn validate_values(event: &str, fields: &[Field], values: &[Value<'_>]) -> Result<usize, Error> {
    if values.len() != fields.len() {
        return Err(Error::ValueCount { event: event.to_owned(), expected: fields.len(), got: values.len() });
    }
    let mut len = 0usize;
    for (field, value) in fields.iter().zip(values) {
        len += field.ty.fixed_size() + check_value(event, field, value)?;
    }
    if len > MAX_PAYLOAD_LEN {
        return Err(Error::PayloadTooLarge { event: event.to_owned(), len, max: MAX_PAYLOAD_LEN });
    }
    Ok(len)
}

/// The length of a variable-length value's data, as `check_value` counted it.
fn data_len(value: &Value<'_>) -> usize {
    match value {
        Value::Str(s) => s.len() + 1,
        Value::Bytes(b) => b.len(),
        _ => 0,
    }
}

/// Checks `values` against `fields` and builds the `iovec`s of one write.
fn lay_out<'a, const N: usize>(
    iov: &mut IovecArray<'a, N>,
    index_bytes: &'a [u8; 4],
    locs: &'a mut [u32; MAX_FIELDS],
    event: &str,
    fields: &[Field],
    values: &'a [Value<'a>],
) -> Result<(), Error> {
    validate_values(event, fields, values)?;
    debug_assert!(fields.len() <= MAX_FIELDS, "checked at registration");

    let fixed_len: usize = fields.iter().map(|f| f.ty.fixed_size()).sum();
    let mut variable_len = 0usize;
    let mut fixed_end = 0usize;
    for (i, (field, value)) in fields.iter().zip(values).enumerate() {
        fixed_end += field.ty.fixed_size();
        if matches!(field.ty, FieldType::Str | FieldType::Bytes) {
            // A rel_loc offset counts from the end of the loc word itself.
            let offset = fixed_len - fixed_end + variable_len;
            let len = data_len(value);
            variable_len += len;
            // Both fit in u16: the payload was checked against 8184 bytes.
            locs[i] = dyn_loc(offset as u16, len as u16);
        }
    }

    let locs: &'a [u32; MAX_FIELDS] = locs;
    iov.push_slice(index_bytes);
    for (i, (field, value)) in fields.iter().zip(values).enumerate() {
        match (field.ty, value) {
            (FieldType::Str | FieldType::Bytes, _) => iov.push_slice(as_bytes(&locs[i])),
            (FieldType::CharArray(n), Value::Str(s)) => {
                iov.push_slice(s.as_bytes());
                iov.push_slice(&ZEROS[..n as usize - s.len()]);
            }
            (FieldType::CharArray(n), Value::Bytes(b)) => {
                iov.push_slice(b);
                iov.push_slice(&ZEROS[..n as usize - b.len()]);
            }
            (_, value) => iov.push_slice(scalar_bytes(value)),
        }
    }
    for (field, value) in fields.iter().zip(values) {
        match (field.ty, value) {
            (FieldType::Str, Value::Str(s)) => {
                iov.push_slice(s.as_bytes());
                iov.push_slice(&ZEROS[..1]);
            }
            (FieldType::Bytes, Value::Bytes(b)) => iov.push_slice(b),
            _ => {}
        }
    }
    Ok(())
}

/// Checks that `value` suits `field`; returns its variable-length size.
fn check_value(event: &str, field: &Field, value: &Value<'_>) -> Result<usize, Error> {
    let mismatch = || Error::ValueMismatch {
        event: event.to_owned(),
        field: field.name.to_string(),
        expected: field.ty.name(),
        got: value.type_name(),
    };
    let ok = match (field.ty, value) {
        (FieldType::U8, Value::U8(_))
        | (FieldType::U16, Value::U16(_))
        | (FieldType::U32, Value::U32(_))
        | (FieldType::U64, Value::U64(_))
        | (FieldType::I8, Value::I8(_))
        | (FieldType::I16, Value::I16(_))
        | (FieldType::I32, Value::I32(_))
        | (FieldType::I64, Value::I64(_))
        | (FieldType::Bool, Value::Bool(_))
        | (FieldType::F32, Value::F32(_))
        | (FieldType::F64, Value::F64(_)) => true,
        (FieldType::CharArray(n), Value::Str(_) | Value::Bytes(_)) => {
            let len = match value {
                Value::Str(s) => s.len(),
                Value::Bytes(b) => b.len(),
                _ => 0,
            };
            if len > n as usize {
                return Err(Error::ValueTooLong { event: event.to_owned(), field: field.name.to_string(), len, max: n as usize });
            }
            return Ok(0);
        }
        (FieldType::Str, Value::Str(s)) => {
            if contains_nul(s.as_bytes()) {
                return Err(Error::InteriorNul { event: event.to_owned(), field: field.name.to_string() });
            }
            return Ok(s.len() + 1);
        }
        (FieldType::Bytes, Value::Bytes(b)) => return Ok(b.len()),
        _ => false,
    };
    if ok { Ok(0) } else { Err(mismatch()) }
}


fn contains_nul(bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return false;
    }
    // SAFETY: memchr reads exactly `bytes.len()` bytes from a valid slice.
    !unsafe { libc::memchr(bytes.as_ptr().cast(), 0, bytes.len()) }.is_null()
}

fn scalar_bytes<'v>(value: &'v Value<'_>) -> &'v [u8] {
    match value {
        Value::U8(v) => as_bytes(v),
        Value::U16(v) => as_bytes(v),
        Value::U32(v) => as_bytes(v),
        Value::U64(v) => as_bytes(v),
        Value::I8(v) => as_bytes(v),
        Value::I16(v) => as_bytes(v),
        Value::I32(v) => as_bytes(v),
        Value::I64(v) => as_bytes(v),
        // bool is one byte, 0 or 1, by Rust's guarantee.
        Value::Bool(v) => as_bytes(v),
        Value::F32(v) => as_bytes(v),
        Value::F64(v) => as_bytes(v),
        Value::Str(_) | Value::Bytes(_) => unreachable!("variable-length values are not scalars"),
    }
}

/// The in-memory bytes of a plain value (native-endian, as the kernel reads).
fn as_bytes<T: Copy>(value: &T) -> &[u8] {
    // SAFETY: only instantiated with integers, floats and bool, which have no
    // padding and no invalid byte patterns to read; the slice borrows `value`.
    unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// A fixed-capacity `iovec` array on the stack.
struct IovecArray<'a, const N: usize> {
    entries: MaybeUninit<[libc::iovec; N]>,
    len: usize,
    _borrows: std::marker::PhantomData<&'a [u8]>,
}

impl<'a, const N: usize> IovecArray<'a, N> {
    fn new() -> Self {
        IovecArray { entries: MaybeUninit::uninit(), len: 0, _borrows: std::marker::PhantomData }
    }

    fn push_slice(&mut self, bytes: &'a [u8]) {
        if bytes.is_empty() {
            return;
        }
        assert!(self.len < N, "the iovec array is sized from the field count");
        let iov = libc::iovec { iov_base: bytes.as_ptr() as *mut _, iov_len: bytes.len() };
        // SAFETY: `len < N`, so the slot is inside the array.
        unsafe { self.entries.as_mut_ptr().cast::<libc::iovec>().add(self.len).write(iov) };
        self.len += 1;
    }

    fn as_slice(&self) -> &[libc::iovec] {
        // SAFETY: the first `len` entries were written by `push_slice`.
        unsafe { std::slice::from_raw_parts(self.entries.as_ptr().cast(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(fields: &[Field], values: &[Value<'_>]) -> Result<Vec<u8>, Error> {
        let index = 7u32.to_ne_bytes();
        let mut locs = [0u32; MAX_FIELDS];
        let mut iov = IovecArray::<{ iovecs_for(MAX_FIELDS) }>::new();
        lay_out(&mut iov, &index, &mut locs, "ev", fields, values)?;
        let mut out = Vec::new();
        for v in iov.as_slice() {
            // SAFETY: each iovec points at a live slice borrowed by `iov`.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) });
        }
        Ok(out)
    }

    #[test]
    fn fixed_fields_follow_the_index_in_order() {
        let fields = [Field::new("a", FieldType::U8), Field::new("b", FieldType::I32), Field::new("c", FieldType::Bool)];
        let bytes = encode(&fields, &[Value::U8(0xAB), Value::I32(-2), Value::Bool(true)]).unwrap();
        let mut want = 7u32.to_ne_bytes().to_vec();
        want.push(0xAB);
        want.extend_from_slice(&(-2i32).to_ne_bytes());
        want.push(1);
        assert_eq!(bytes, want);
    }

    #[test]
    fn strings_and_bytes_are_rel_loc_with_data_after_the_fixed_part() {
        let fields = [Field::new("s", FieldType::Str), Field::new("n", FieldType::U16), Field::new("b", FieldType::Bytes)];
        let bytes = encode(&fields, &[Value::Str("héllo"), Value::U16(9), Value::Bytes(&[1, 2, 3])]).unwrap();
        let payload = &bytes[4..];
        // Fixed part: loc(4) + u16(2) + loc(4) = 10 bytes.
        let loc_s = u32::from_ne_bytes(payload[0..4].try_into().unwrap());
        let (off_s, len_s) = ((loc_s & 0xffff) as usize, (loc_s >> 16) as usize);
        assert_eq!(&payload[4 + off_s..4 + off_s + len_s], "héllo\0".as_bytes());
        assert_eq!(u16::from_ne_bytes(payload[4..6].try_into().unwrap()), 9);
        let loc_b = u32::from_ne_bytes(payload[6..10].try_into().unwrap());
        let (off_b, len_b) = ((loc_b & 0xffff) as usize, (loc_b >> 16) as usize);
        assert_eq!(&payload[10 + off_b..10 + off_b + len_b], &[1, 2, 3]);
        assert_eq!(payload.len(), 10 + 7 + 3);
    }

    #[test]
    fn empty_strings_still_carry_their_nul() {
        let bytes = encode(&[Field::new("s", FieldType::Str)], &[Value::Str("")]).unwrap();
        assert_eq!(&bytes[4..], &[0, 0, 1, 0, 0][..], "offset 0, length 1, then the NUL");
    }

    #[test]
    fn char_arrays_are_zero_padded_and_length_checked() {
        let fields = [Field::new("c", FieldType::CharArray(6))];
        assert_eq!(&encode(&fields, &[Value::Str("abc")]).unwrap()[4..], b"abc\0\0\0");
        let err = encode(&fields, &[Value::Str("abcdefg")]).unwrap_err();
        assert!(matches!(err, Error::ValueTooLong { len: 7, max: 6, .. }), "{err}");
    }

    #[test]
    fn floats_are_their_ieee_bits() {
        let fields = [Field::new("x", FieldType::F64), Field::new("y", FieldType::F32)];
        let bytes = encode(&fields, &[Value::F64(1.5), Value::F32(-0.25)]).unwrap();
        assert_eq!(f64::from_ne_bytes(bytes[4..12].try_into().unwrap()), 1.5);
        assert_eq!(f32::from_ne_bytes(bytes[12..16].try_into().unwrap()), -0.25);
    }

    #[test]
    fn wrong_values_are_named_errors() {
        let fields = [Field::new("status", FieldType::U32)];
        let err = encode(&fields, &[Value::Str("x")]).unwrap_err();
        assert_eq!(err.to_string(), "field status of event ev is u32, but a string was given");
        assert!(matches!(encode(&fields, &[]), Err(Error::ValueCount { expected: 1, got: 0, .. })));
        let err = encode(&[Field::new("s", FieldType::Str)], &[Value::Str("a\0b")]).unwrap_err();
        assert!(matches!(err, Error::InteriorNul { .. }));
    }

    #[test]
    fn payloads_perf_cannot_carry_are_refused() {
        let fields = [Field::new("b", FieldType::Bytes)];
        let fits = vec![0u8; MAX_PAYLOAD_LEN - 4];
        assert!(encode(&fields, &[Value::Bytes(&fits)]).is_ok());
        let too_big = vec![0u8; MAX_PAYLOAD_LEN - 3];
        let err = encode(&fields, &[Value::Bytes(&too_big)]).unwrap_err();
        assert!(matches!(err, Error::PayloadTooLarge { len: 8185, max: 8184, .. }), "{err}");
        let huge = vec![0u8; 70_000];
        assert!(matches!(encode(&fields, &[Value::Bytes(&huge)]), Err(Error::PayloadTooLarge { .. })));
    }
}

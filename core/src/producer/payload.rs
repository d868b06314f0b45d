//! Lays out one event and writes it with a single `writev`.
//!
//! The layout is the kernel's: the 4-byte write index, every fixed-size
//! field in declaration order, then the variable-length data of strings and
//! byte slices. [`lay_out`] is that rule after the index, for both
//! transports: here the index goes first and the pieces go to `writev`; the
//! shared-memory ring puts a record header first and copies the pieces. A small event (most are) is gathered into one buffer on the
//! stack and written as one `iovec`: the kernel copies each `iovec` on its
//! own, and in the guest six of them cost 1.25x one (bindings-java's
//! BENCHMARKS.md), far more than copying a few dozen bytes here. A larger
//! one is written where it lies, each `iovec` pointing at the caller's
//! value, a stack-held `__rel_loc` word, or a static run of zeros, so that
//! nothing is copied or allocated.
//!
//! # Safety
//! Raw pointers only ever point into the caller's values or this module's
//! stack buffers, for as long as the `writev` that reads them: the
//! fixed-capacity buffers write within their capacity, checked before each
//! write, and plain values are read as bytes only for integers, floats and
//! bool, which have no padding.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;

use super::field::{Field, FieldType, MAX_FIELDS};
use super::value::Value;
use crate::abi::{dyn_loc, MAX_CHAR_ARRAY_LEN, MAX_PAYLOAD_LEN};
use crate::sys::{self, Errno, Iovec, RawFd};
use crate::Error;


static ZEROS: [u8; MAX_CHAR_ARRAY_LEN] = [0; MAX_CHAR_ARRAY_LEN];

/// The largest write (index included) gathered into one buffer. Past it,
/// the copy would start to cost what the `iovec`s save, and the buffer is
/// stack the caller did not ask for.
const GATHER_MAX: usize = 256;

/// Writes one event. `EBADF` (the last tracer detached after the caller saw
/// the bit) is success: the event had nobody to go to.
pub fn write_event(
    fd: RawFd,
    write_index: u32,
    event: &str,
    fields: &[Field],
    values: &[Value<'_>],
) -> Result<(), Error> {
    let len = validate_values(event, fields, values)?;
    debug_assert!(fields.len() <= MAX_FIELDS, "checked at registration");
    let index_bytes = write_index.to_ne_bytes();
    let mut locs = [0u32; MAX_FIELDS];
    let written = if 4 + len.total() <= GATHER_MAX {
        let mut buffer = GatherBuffer::<GATHER_MAX>::new();
        buffer.push(&index_bytes);
        lay_out(&mut buffer, &mut locs, len.fixed, fields, values);
        sys::writev(fd, &[buffer.as_iovec()])
    } else {
        // The compiler zero-fills stack arrays even when they are left
        // uninitialised, so the array is sized to the event: most have few fields.
        match fields.len() {
            0..=4 => write_scattered::<{ iovecs_for(4) }>(fd, &index_bytes, &mut locs, len.fixed, fields, values),
            5..=8 => write_scattered::<{ iovecs_for(8) }>(fd, &index_bytes, &mut locs, len.fixed, fields, values),
            9..=16 => write_scattered::<{ iovecs_for(16) }>(fd, &index_bytes, &mut locs, len.fixed, fields, values),
            _ => write_scattered::<{ iovecs_for(MAX_FIELDS) }>(fd, &index_bytes, &mut locs, len.fixed, fields, values),
        }
    };
    match written {
        Ok(_) | Err(Errno(libc::EBADF)) => Ok(()),
        Err(errno) => Err(Error::Kernel { op: "write", event: event.to_owned(), errno }),
    }
}

/// One for the index; a fixed field takes one (two for a padded char array);
/// a variable field takes one more for its data and one for its NUL.
const fn iovecs_for(fields: usize) -> usize {
    1 + 4 * fields
}

/// Writes checked `values` as `iovec`s pointing where they lie.
fn write_scattered<const N: usize>(
    fd: RawFd,
    index_bytes: &[u8; 4],
    locs: &mut [u32; MAX_FIELDS],
    fixed_len: usize,
    fields: &[Field],
    values: &[Value<'_>],
) -> Result<usize, Errno> {
    // Built in place: returning the iovecs by value would copy them.
    let mut iov = IovecArray::<N>::new();
    iov.push(index_bytes);
    lay_out(&mut iov, locs, fixed_len, fields, values);
    sys::writev(fd, iov.as_slice())
}

/// The length of one event's payload, as its check counted it: the fixed
/// part the `__rel_loc` offsets count across, and the data after it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PayloadLen {
    /// Every field's fixed-size part: values, `char[N]`s and loc words.
    pub(crate) fixed: usize,
    /// The strings' and byte slices' data, NULs included.
    pub(crate) variable: usize,
}

impl PayloadLen {
    pub(crate) fn total(self) -> usize {
        self.fixed + self.variable
    }
}

/// Checks `values` against `fields` as every emit does; returns the
/// payload's length. [`Definition::validate`](super::Definition::validate)
/// is this check without the write.
pub(crate) fn validate_values(event: &str, fields: &[Field], values: &[Value<'_>]) -> Result<PayloadLen, Error> {
    if values.len() != fields.len() {
        return Err(Error::ValueCount { event: event.to_owned(), expected: fields.len(), got: values.len() });
    }
    let mut len = PayloadLen { fixed: 0, variable: 0 };
    for (field, value) in fields.iter().zip(values) {
        len.fixed += field.ty.fixed_size();
        len.variable += check_value(event, field, value)?;
    }
    if len.total() > MAX_PAYLOAD_LEN {
        return Err(Error::PayloadTooLarge { event: event.to_owned(), len: len.total(), max: MAX_PAYLOAD_LEN });
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

/// Where [`lay_out`] puts the pieces of one write, in order.
pub(crate) trait Pieces<'a> {
    fn push(&mut self, bytes: &'a [u8]);
}

/// Lays out `values`, already checked against `fields` by
/// [`validate_values`] (which counted `fixed_len`), as the pieces of one
/// payload: what follows the write index. Each variable field's loc word
/// is written into its own slot of `locs`, which the pieces then borrow.
pub(crate) fn lay_out<'a>(
    pieces: &mut impl Pieces<'a>,
    locs: &'a mut [u32; MAX_FIELDS],
    fixed_len: usize,
    fields: &[Field],
    values: &'a [Value<'a>],
) {
    let mut variable_len = 0usize;
    let mut fixed_end = 0usize;
    for ((field, value), slot) in fields.iter().zip(values).zip(locs.iter_mut()) {
        fixed_end += field.ty.fixed_size();
        match (field.ty, value) {
            (FieldType::Str | FieldType::Bytes, _) => {
                // A rel_loc offset counts from the end of the loc word itself.
                let offset = fixed_len - fixed_end + variable_len;
                let len = data_len(value);
                variable_len += len;
                // Both fit in u16: the payload was checked against 8184 bytes.
                *slot = dyn_loc(offset as u16, len as u16);
                let slot: &'a u32 = slot;
                pieces.push(as_bytes(slot));
            }
            (FieldType::CharArray(n), Value::Str(s)) => {
                pieces.push(s.as_bytes());
                pieces.push(&ZEROS[..n as usize - s.len()]);
            }
            (FieldType::CharArray(n), Value::Bytes(b)) => {
                pieces.push(b);
                pieces.push(&ZEROS[..n as usize - b.len()]);
            }
            (_, value) => pieces.push(scalar_bytes(value)),
        }
    }
    for (field, value) in fields.iter().zip(values) {
        match (field.ty, value) {
            (FieldType::Str, Value::Str(s)) => {
                pieces.push(s.as_bytes());
                pieces.push(&ZEROS[..1]);
            }
            (FieldType::Bytes, Value::Bytes(b)) => pieces.push(b),
            _ => {}
        }
    }
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


/// Strings shorter than this are scanned for a NUL here, not by libc's
/// `memchr`: most field values are a few bytes, and for them the call
/// through the PLT costs more than the scan (under emulation, far more).
const SHORT_STRING: usize = 32;

fn contains_nul(bytes: &[u8]) -> bool {
    if bytes.len() < SHORT_STRING {
        return bytes.contains(&0);
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
    entries: MaybeUninit<[Iovec; N]>,
    len: usize,
    _borrows: std::marker::PhantomData<&'a [u8]>,
}

impl<'a, const N: usize> IovecArray<'a, N> {
    fn new() -> Self {
        IovecArray { entries: MaybeUninit::uninit(), len: 0, _borrows: std::marker::PhantomData }
    }

    fn as_slice(&self) -> &[Iovec] {
        // SAFETY: the first `len` entries were written by `push`.
        unsafe { std::slice::from_raw_parts(self.entries.as_ptr().cast(), self.len) }
    }
}

impl<'a, const N: usize> Pieces<'a> for IovecArray<'a, N> {
    fn push(&mut self, bytes: &'a [u8]) {
        if bytes.is_empty() {
            return;
        }
        assert!(self.len < N, "the iovec array is sized from the field count");
        let iov = Iovec { iov_base: bytes.as_ptr() as *mut _, iov_len: bytes.len() };
        // SAFETY: `len < N`, so the slot is inside the array.
        unsafe { self.entries.as_mut_ptr().cast::<Iovec>().add(self.len).write(iov) };
        self.len += 1;
    }
}

/// A fixed-capacity byte buffer on the stack that the pieces are copied
/// into. Left uninitialised: zero-filling it would cost more than the copy.
struct GatherBuffer<const N: usize> {
    bytes: MaybeUninit<[u8; N]>,
    len: usize,
}

impl<const N: usize> GatherBuffer<N> {
    fn new() -> Self {
        GatherBuffer { bytes: MaybeUninit::uninit(), len: 0 }
    }

    /// The gathered bytes as one `iovec`, valid while `self` is borrowed.
    fn as_iovec(&self) -> Iovec {
        Iovec { iov_base: self.bytes.as_ptr() as *mut _, iov_len: self.len }
    }

    #[cfg(test)]
    fn as_slice(&self) -> &[u8] {
        // SAFETY: the first `len` bytes were written by `push`.
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast(), self.len) }
    }
}

impl<const N: usize> Pieces<'_> for GatherBuffer<N> {
    fn push(&mut self, bytes: &[u8]) {
        assert!(bytes.len() <= N - self.len, "gathered only when validate_values counted a write that fits");
        // SAFETY: `self.len` is at most N (each push keeps it so), so the
        // pointer is inside the buffer or one past its end.
        let at = unsafe { self.bytes.as_mut_ptr().cast::<u8>().add(self.len) };
        // SAFETY: the bytes fit after the first `len` (checked above); a
        // caller's slice cannot overlap this buffer, which nothing else borrows.
        unsafe { copy_piece(bytes, at) };
        self.len += bytes.len();
    }
}

/// Copies `src` to `dst` as `copy_nonoverlapping` does, but a piece of at
/// most 16 bytes (a value, a loc word, a short string: nearly every piece)
/// with two loads and two stores in line, which may overlap, instead of a
/// call to libc's `memcpy` through the PLT. A gathered event is six or so
/// such pieces, and the calls cost more than the copies: natively a few
/// ns an event (`benches/layout.rs`), more under emulation, where every
/// call and return is a lookup.
///
/// # Safety
/// `dst` is valid for `src.len()` bytes of writes, and does not overlap `src`.
#[inline(always)]
unsafe fn copy_piece(src: &[u8], dst: *mut u8) {
    let (n, s) = (src.len(), src.as_ptr());
    // SAFETY: in every arm, each read lies within `src`'s `n` bytes and
    // each write within `dst`'s, by the arm's bounds on `n` and the
    // caller's contract; unaligned reads and writes suit any address.
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                // First, middle and last byte: all of them for 1 to 3.
                *dst = *s;
                *dst.add(n / 2) = *s.add(n / 2);
                *dst.add(n - 1) = *s.add(n - 1);
            }
            4..=7 => {
                let (head, tail) = (s.cast::<u32>().read_unaligned(), s.add(n - 4).cast::<u32>().read_unaligned());
                dst.cast::<u32>().write_unaligned(head);
                dst.add(n - 4).cast::<u32>().write_unaligned(tail);
            }
            8..=16 => {
                let (head, tail) = (s.cast::<u64>().read_unaligned(), s.add(n - 8).cast::<u64>().read_unaligned());
                dst.cast::<u64>().write_unaligned(head);
                dst.add(n - 8).cast::<u64>().write_unaligned(tail);
            }
            _ => dst.copy_from_nonoverlapping(s, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of one write, as `write_event` would lay them out: both
    /// ways where the write is small enough to gather, which must agree.
    fn encode(fields: &[Field], values: &[Value<'_>]) -> Result<Vec<u8>, Error> {
        let len = validate_values("ev", fields, values)?;
        let index = 7u32.to_ne_bytes();
        let mut locs = [0u32; MAX_FIELDS];
        let mut iov = IovecArray::<{ iovecs_for(MAX_FIELDS) }>::new();
        iov.push(&index);
        lay_out(&mut iov, &mut locs, len.fixed, fields, values);
        let mut scattered = Vec::new();
        for v in iov.as_slice() {
            // SAFETY: each iovec points at a live slice borrowed by `iov`.
            scattered.extend_from_slice(unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) });
        }
        assert_eq!(scattered.len(), 4 + len.total(), "validate_values counts what is laid out");
        if scattered.len() <= GATHER_MAX {
            let mut locs = [0u32; MAX_FIELDS];
            let mut buffer = GatherBuffer::<GATHER_MAX>::new();
            buffer.push(&index);
            lay_out(&mut buffer, &mut locs, len.fixed, fields, values);
            assert_eq!(buffer.as_slice(), &scattered[..], "gathered and scattered layouts agree");
            assert_eq!(buffer.as_iovec().iov_len, scattered.len());
        }
        Ok(scattered)
    }

    #[test]
    fn a_write_of_exactly_the_gathering_limit_is_gathered_whole() {
        // A string whose write (index, loc word, data and NUL) is the limit.
        let text = "x".repeat(GATHER_MAX - 4 - 4 - 1);
        let bytes = encode(&[Field::new("s", FieldType::Str)], &[Value::Str(&text)]).unwrap();
        assert_eq!(bytes.len(), GATHER_MAX);
        assert_eq!(&bytes[8..GATHER_MAX - 1], text.as_bytes());
        assert_eq!(bytes[GATHER_MAX - 1], 0);
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

    #[test]
    fn pieces_of_every_length_are_copied_exactly_and_nothing_past_them() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=src.len() {
            for offset in [0, 1, 3, 7] {
                let mut dst = [0xAAu8; 64];
                // SAFETY: `offset + n` is at most 47 of the 64 bytes; `src` is another array.
                unsafe { copy_piece(&src[..n], dst.as_mut_ptr().add(offset)) };
                assert_eq!(&dst[offset..offset + n], &src[..n], "{n} bytes at {offset}");
                assert!(dst[..offset].iter().chain(&dst[offset + n..]).all(|&b| b == 0xAA), "{n} bytes at {offset} wrote outside");
            }
        }
    }

    #[test]
    fn a_nul_is_found_at_every_place_in_short_and_long_strings() {
        for len in [0, 1, 2, SHORT_STRING - 1, SHORT_STRING, SHORT_STRING + 1, 100] {
            let clean = vec![b'x'; len];
            assert!(!contains_nul(&clean), "{len} bytes without a NUL");
            for at in 0..len {
                let mut bytes = clean.clone();
                bytes[at] = 0;
                assert!(contains_nul(&bytes), "NUL at {at} of {len}");
            }
        }
    }
}

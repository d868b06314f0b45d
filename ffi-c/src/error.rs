//! Result codes, and the messages that explain them.
//!
//! Codes live in their own range (7100 and up), so they cannot be mistaken
//! for an errno or a count. `7100 + n` is the core's stable
//! `ErrorKind::code()` `n`, the table every binding shares; codes from 7150
//! are the C API's own (bad arguments, a panic).
//!
//! # Safety
//! The exports are `#[no_mangle]`; `usertrace_last_error` writes the
//! message into the caller's buffer, under its contract.
#![allow(unsafe_code)]

use std::ffi::c_char;
use std::fmt;

use ut::ErrorKind;

use crate::boundary;

/// 0 on success, else one of the `USERTRACE_ERR_*` codes.
pub type usertrace_result = i32;

/// Success.
pub const USERTRACE_OK: usertrace_result = 0;
/// Where the shared error table starts: `USERTRACE_ERR_BASE + ErrorKind code`.
pub const USERTRACE_ERR_BASE: usertrace_result = 7100;
/// user_events cannot be used here; `usertrace_status` says why.
pub const USERTRACE_ERR_UNAVAILABLE: usertrace_result = 7101;
/// An event, provider or field name is not `[A-Za-z0-9_]+`.
pub const USERTRACE_ERR_INVALID_NAME: usertrace_result = 7102;
/// Too many fields, a `char[N]` too large, or a format over 511 bytes.
pub const USERTRACE_ERR_INVALID_FORMAT: usertrace_result = 7103;
/// The event name is registered with different fields.
pub const USERTRACE_ERR_FIELDS_MISMATCH: usertrace_result = 7104;
/// A value does not fit its field (type, count, length, NUL inside).
pub const USERTRACE_ERR_VALUE_MISMATCH: usertrace_result = 7105;
/// The event would exceed what perf can record (8 KiB).
pub const USERTRACE_ERR_PAYLOAD_TOO_LARGE: usertrace_result = 7106;
/// The kernel's limit of user events (`kernel.user_events_max`) is reached.
pub const USERTRACE_ERR_TOO_MANY_EVENTS: usertrace_result = 7107;
/// The operation needs a privilege (CAP_PERFMON).
pub const USERTRACE_ERR_PERMISSION_DENIED: usertrace_result = 7108;
/// No event of that name exists.
pub const USERTRACE_ERR_UNKNOWN_EVENT: usertrace_result = 7109;
/// The event is still registered by some process.
pub const USERTRACE_ERR_EVENT_BUSY: usertrace_result = 7110;
/// The kernel refused for another reason; the message carries the errno.
pub const USERTRACE_ERR_KERNEL: usertrace_result = 7111;
pub const USERTRACE_ERR_DUPLICATE_FIELD: usertrace_result = 7112;
pub const USERTRACE_ERR_TOO_MANY_FIELDS: usertrace_result = 7113;
pub const USERTRACE_ERR_EMPTY_CHAR_ARRAY: usertrace_result = 7114;
pub const USERTRACE_ERR_UNKNOWN_FIELD_TYPE: usertrace_result = 7115;
/// A required pointer argument was NULL.
pub const USERTRACE_ERR_NULL_ARGUMENT: usertrace_result = 7150;
/// An argument is invalid: an unknown field or value type, a string that
/// is not UTF-8.
pub const USERTRACE_ERR_INVALID_ARGUMENT: usertrace_result = 7151;
/// A bug in libusertrace (a Rust panic, caught at the boundary).
pub const USERTRACE_ERR_PANIC: usertrace_result = 7199;

/// Why an export failed.
// cbindgen needs literals; the core owns the numbering (rustls-ffi's way).
const _: () = {
    use ErrorKind as K;
    const fn code(kind: K) -> usertrace_result {
        USERTRACE_ERR_BASE + kind.code()
    }
    assert!(USERTRACE_ERR_UNAVAILABLE == code(K::Unavailable));
    assert!(USERTRACE_ERR_INVALID_NAME == code(K::InvalidName));
    assert!(USERTRACE_ERR_INVALID_FORMAT == code(K::InvalidFormat));
    assert!(USERTRACE_ERR_FIELDS_MISMATCH == code(K::FieldsMismatch));
    assert!(USERTRACE_ERR_VALUE_MISMATCH == code(K::ValueMismatch));
    assert!(USERTRACE_ERR_PAYLOAD_TOO_LARGE == code(K::PayloadTooLarge));
    assert!(USERTRACE_ERR_TOO_MANY_EVENTS == code(K::TooManyEvents));
    assert!(USERTRACE_ERR_PERMISSION_DENIED == code(K::PermissionDenied));
    assert!(USERTRACE_ERR_UNKNOWN_EVENT == code(K::UnknownEvent));
    assert!(USERTRACE_ERR_EVENT_BUSY == code(K::EventBusy));
    assert!(USERTRACE_ERR_KERNEL == code(K::Kernel));
    assert!(USERTRACE_ERR_DUPLICATE_FIELD == code(K::DuplicateField));
    assert!(USERTRACE_ERR_TOO_MANY_FIELDS == code(K::TooManyFields));
    assert!(USERTRACE_ERR_EMPTY_CHAR_ARRAY == code(K::EmptyCharArray));
    assert!(USERTRACE_ERR_UNKNOWN_FIELD_TYPE == code(K::UnknownFieldType));
    assert!(K::ALL.len() == 15, "a new ErrorKind needs its USERTRACE_ERR_ constant");
    // The C API's own codes stay clear of the core's.
    assert!(USERTRACE_ERR_BASE + (K::ALL.len() as i32) < USERTRACE_ERR_NULL_ARGUMENT);
};

#[derive(Debug)]
pub(crate) enum Failure {
    Usertrace(ut::Error),
    Null(&'static str),
    Invalid(String),
}

impl Failure {
    pub(crate) fn code(&self) -> usertrace_result {
        match self {
            Failure::Usertrace(e) => kind_code(e.kind()),
            Failure::Null(_) => USERTRACE_ERR_NULL_ARGUMENT,
            Failure::Invalid(_) => USERTRACE_ERR_INVALID_ARGUMENT,
        }
    }
}

fn kind_code(kind: ErrorKind) -> usertrace_result {
    USERTRACE_ERR_BASE + kind.code()
}

impl From<ut::Error> for Failure {
    fn from(e: ut::Error) -> Self {
        Failure::Usertrace(e)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usertrace(e) => e.fmt(f),
            Failure::Null(what) => write!(f, "{what} must not be NULL"),
            Failure::Invalid(msg) => f.write_str(msg),
        }
    }
}

/// Fails with `USERTRACE_ERR_NULL_ARGUMENT` when `p` is NULL.
pub(crate) fn non_null<T>(p: *const T, what: &'static str) -> Result<*const T, Failure> {
    if p.is_null() {
        Err(Failure::Null(what))
    } else {
        Ok(p)
    }
}

/// A static, NUL-terminated description of `result` (never NULL): what the
/// code means, not the details of one failure (see `usertrace_last_error`).
#[no_mangle]
pub extern "C" fn usertrace_error_string(result: usertrace_result) -> *const c_char {
    let s: &'static [u8] = match result {
        USERTRACE_OK => b"success\0",
        USERTRACE_ERR_UNAVAILABLE => b"user_events is not available (see usertrace_status)\0",
        USERTRACE_ERR_INVALID_NAME => b"invalid name: use only ASCII letters, digits and '_'\0",
        USERTRACE_ERR_INVALID_FORMAT => b"invalid event format: a char array too large or a format too long\0",
        USERTRACE_ERR_FIELDS_MISMATCH => b"the event is already registered with different fields\0",
        USERTRACE_ERR_VALUE_MISMATCH => b"a value does not match its field\0",
        USERTRACE_ERR_PAYLOAD_TOO_LARGE => b"the event is larger than perf can record\0",
        USERTRACE_ERR_TOO_MANY_EVENTS => b"the kernel's limit of user events is reached\0",
        USERTRACE_ERR_PERMISSION_DENIED => b"permission denied (needs CAP_PERFMON or root)\0",
        USERTRACE_ERR_UNKNOWN_EVENT => b"no such user event\0",
        USERTRACE_ERR_EVENT_BUSY => b"the event is still in use\0",
        USERTRACE_ERR_KERNEL => b"the kernel refused the operation\0",
        USERTRACE_ERR_DUPLICATE_FIELD => b"two fields of the event have the same name\0",
        USERTRACE_ERR_TOO_MANY_FIELDS => b"the event has more fields than USERTRACE_MAX_FIELDS\0",
        USERTRACE_ERR_EMPTY_CHAR_ARRAY => b"a char[0] field holds nothing: use char[N] with N from 1 to 1024\0",
        USERTRACE_ERR_UNKNOWN_FIELD_TYPE => b"a field type is not one of the USERTRACE_TYPE_ constants\0",
        USERTRACE_ERR_NULL_ARGUMENT => b"a required argument was NULL\0",
        USERTRACE_ERR_INVALID_ARGUMENT => b"an argument is invalid\0",
        USERTRACE_ERR_PANIC => b"internal error in libusertrace\0",
        _ => b"unknown usertrace result code\0",
    };
    s.as_ptr().cast()
}

/// Writes the message of the last failure on this thread into `buf` (`len`
/// bytes, always NUL-terminated, truncated if needed). As with `snprintf`,
/// `*out_n` (if not NULL) gets the message's full length without the NUL,
/// also when it was truncated: a buffer of `*out_n + 1` bytes holds it all.
/// `buf` may be NULL with `len` 0, to ask for that length alone. Returns
/// `USERTRACE_OK` if all of the message was written,
/// `USERTRACE_ERR_INVALID_ARGUMENT` if not (truncated, or only asked for),
/// `USERTRACE_ERR_NULL_ARGUMENT` for a NULL `buf` with `len` > 0.
///
/// # Safety
/// `buf` NULL or valid for `len` bytes; `out_n` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_last_error(buf: *mut c_char, len: usize, out_n: *mut usize) -> usertrace_result {
    // Not through `guard`'s error path: that would replace the message.
    boundary::guard_value(USERTRACE_ERR_PANIC, || {
        if buf.is_null() && len != 0 {
            return USERTRACE_ERR_NULL_ARGUMENT;
        }
        // SAFETY: `buf` is not NULL here unless `len` is 0, and the caller
        // promises "`buf` NULL or valid for `len` bytes; `out_n` NULL or
        // valid", which is what write_message needs.
        let fitted = boundary::with_last_error(|m| unsafe { boundary::write_message(m, buf.cast(), len, out_n) });
        if fitted {
            USERTRACE_OK
        } else {
            USERTRACE_ERR_INVALID_ARGUMENT
        }
    })
}

//! The panic boundary around every export, and the per-thread last error.
//!
//! A panic in Rust must never unwind into C (undefined behaviour): each
//! export's body runs under `catch_unwind`, and a panic becomes
//! `USERTRACE_ERR_PANIC`. An error's full message is kept per thread for
//! `usertrace_last_error`; the result code alone tells what kind it was.
//!
//! # Safety
//! [`write_message`] writes into a buffer the caller lends, within the
//! length it gives, as `snprintf` does.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{usertrace_result, Failure, USERTRACE_ERR_PANIC, USERTRACE_OK};

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Runs `body`; turns its error or panic into a result code.
#[inline]
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> usertrace_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => USERTRACE_OK,
        Ok(Err(failure)) => record(failure),
        Err(_) => {
            remember("usertrace: internal error (a panic in libusertrace); please report it".to_owned());
            USERTRACE_ERR_PANIC
        }
    }
}

/// Runs `body`, which cannot fail, returning `fallback` if it panics.
#[inline]
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

#[cold]
#[inline(never)]
fn record(failure: Failure) -> usertrace_result {
    let code = failure.code();
    remember(failure.to_string());
    code
}

fn remember(message: String) {
    let _ = LAST_ERROR.try_with(|last| *last.borrow_mut() = message);
}

/// Calls `f` with the last error message of this thread.
pub(crate) fn with_last_error<T>(f: impl FnOnce(&str) -> T) -> T {
    let message = LAST_ERROR.try_with(|last| last.borrow().clone()).unwrap_or_default();
    f(&message)
}

/// Copies `text` into the caller's buffer `buf` of `len` bytes, always
/// NUL-terminated (truncated if it does not fit). As with `snprintf`,
/// `*out_n` gets the length of all of `text` (without the NUL), whether it
/// fitted or not, so that a caller whose buffer was too small (or who asked
/// with NULL and 0) knows how much to allocate: `*out_n + 1` bytes. Returns
/// whether it all fitted.
///
/// # Safety
/// `buf` must be valid for `len` bytes (or NULL with `len` 0); `out_n` NULL
/// or valid.
pub(crate) unsafe fn write_message(text: &str, buf: *mut u8, len: usize, out_n: *mut usize) -> bool {
    if !out_n.is_null() {
        // SAFETY: not NULL, so valid ("`out_n` NULL or valid").
        unsafe { *out_n = text.len() };
    }
    if buf.is_null() || len == 0 {
        return text.is_empty();
    }
    let n = text.len().min(len - 1);
    // SAFETY: `buf` is "valid for `len` bytes" and n < len; `text` is a
    // Rust string, which cannot overlap memory the caller lent us to write.
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), buf, n) };
    // SAFETY: n < len, so `buf + n` is the last byte at most.
    unsafe { *buf.add(n) = 0 };
    n == text.len()
}

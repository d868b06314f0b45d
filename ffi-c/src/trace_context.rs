//! W3C trace context from C: `usertrace_trace_context`, a plain struct
//! the program owns (the core's `TraceContext` without its `tracestate`),
//! read from a `traceparent` header and written as one.
//!
//! The ids are the numbers the span events carry: `trace_id_hi` and
//! `trace_id_lo` are the trace id's first and last 8 bytes, each read as a
//! big-endian number, so `printf("%016" PRIx64 "%016" PRIx64, hi, lo)`
//! spells the trace id as `traceparent` and tracing backends do;
//! `span_id` likewise (`%016" PRIx64`). A context whose trace id or span
//! id is 0 is no context: a span begun under it begins a new trace.
//!
//! The C API carries no `tracestate`: usertrace never changes it, so a
//! program passes the header it received on as it is.
//!
//! # Safety
//! The exports read and write the caller's structs and buffers only
//! through the pointers given, within the lengths given.
#![allow(unsafe_code)]

use std::ffi::{c_char, CStr};

use ut::trace_context::{TraceContext, TRACEPARENT_LEN};

use crate::boundary::guard;
use crate::error::{non_null, usertrace_result, Failure};

/// The length of a `traceparent` header value (version 00).
pub const USERTRACE_TRACEPARENT_LEN: usize = 55;
/// The bytes a `traceparent` needs with its NUL: the least `len`
/// `usertrace_trace_context_format` takes.
pub const USERTRACE_TRACEPARENT_SIZE: usize = 56;
/// The `sampled` bit of `usertrace_trace_context.flags`.
pub const USERTRACE_TRACE_FLAG_SAMPLED: u8 = 1;

const _: () = assert!(USERTRACE_TRACEPARENT_LEN == TRACEPARENT_LEN && USERTRACE_TRACEPARENT_SIZE == TRACEPARENT_LEN + 1);
const _: () = assert!(USERTRACE_TRACE_FLAG_SAMPLED == ut::trace_context::SAMPLED);

/// A span's place in a W3C trace: what a span hands to the next service,
/// and what a span begun under it takes as its parent.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct usertrace_trace_context {
    /// The trace id's first 8 bytes, as a big-endian number.
    pub trace_id_hi: u64,
    /// The trace id's last 8 bytes, as a big-endian number.
    pub trace_id_lo: u64,
    /// The span's id: the parent id of the spans begun under it.
    pub span_id: u64,
    /// The W3C trace flags (`USERTRACE_TRACE_FLAG_SAMPLED`).
    pub flags: u8,
}

impl usertrace_trace_context {
    /// The core's context, if both ids are nonzero.
    pub(crate) fn to_core(self) -> Option<TraceContext> {
        TraceContext::new(u128::from(self.trace_id_hi) << 64 | u128::from(self.trace_id_lo), self.span_id, self.flags)
    }

    pub(crate) fn from_core(context: &TraceContext) -> usertrace_trace_context {
        usertrace_trace_context {
            trace_id_hi: (context.trace_id >> 64) as u64,
            trace_id_lo: context.trace_id as u64,
            span_id: context.span_id,
            flags: context.flags,
        }
    }
}

/// The parent `parent` points at, if it is not NULL and is a context.
///
/// # Safety
/// `parent` NULL or valid.
pub(crate) unsafe fn parent_of(parent: *const usertrace_trace_context) -> Option<TraceContext> {
    // SAFETY: "`parent` NULL or valid"; read by value.
    unsafe { parent.as_ref() }.and_then(|p| p.to_core())
}

/// Reads the `traceparent` header value `traceparent` (a C string; spaces
/// or tabs around it are allowed, as HTTP allows them) into `*out`.
/// A value that is malformed, over-long, of version `ff`, in uppercase, or
/// whose trace id or parent id is all zeros is
/// `USERTRACE_ERR_INVALID_ARGUMENT` (`usertrace_last_error` says why), and
/// `*out` is left as it was: begin the span with a NULL parent then, as a
/// new trace. A later version than `00` is read as W3C says.
///
/// # Safety
/// `traceparent` NULL or a C string; `out` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn usertrace_trace_context_parse(
    traceparent: *const c_char,
    out: *mut usertrace_trace_context,
) -> usertrace_result {
    guard(|| {
        non_null(traceparent, "traceparent")?;
        non_null(out, "out")?;
        // SAFETY: not NULL, so "a C string".
        let text = unsafe { CStr::from_ptr(traceparent) };
        let text = text.to_str().map_err(|_| Failure::Invalid("traceparent is not UTF-8".into()))?;
        let context = TraceContext::from_traceparent(text.trim_matches([' ', '\t']))
            .map_err(|e| Failure::Invalid(format!("traceparent {text:?} is not read: {e}")))?;
        // SAFETY: not NULL, so "`out` valid"; written only on success.
        unsafe { *out = usertrace_trace_context::from_core(&context) };
        Ok(())
    })
}

/// Writes the `traceparent` header value of `*context` (version `00`, 55
/// characters and a NUL) into `buf`, which holds `len` bytes: at least
/// `USERTRACE_TRACEPARENT_SIZE`. A context whose trace id or span id is 0
/// (a span begun under no parent while nobody listened) has none:
/// `USERTRACE_ERR_INVALID_ARGUMENT`, and the request goes out without the
/// header. `buf` is written only on success.
///
/// # Safety
/// `context` NULL or valid; `buf` NULL or valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn usertrace_trace_context_format(
    context: *const usertrace_trace_context,
    buf: *mut c_char,
    len: usize,
) -> usertrace_result {
    guard(|| {
        non_null(context, "context")?;
        non_null(buf, "buf")?;
        if len < USERTRACE_TRACEPARENT_SIZE {
            return Err(Failure::Invalid(format!("a traceparent needs a buffer of {USERTRACE_TRACEPARENT_SIZE} bytes, not {len}")));
        }
        // SAFETY: not NULL, so "`context` valid".
        let context = unsafe { *context }.to_core().ok_or_else(|| Failure::Invalid("the context has no trace id or no span id".into()))?;
        let text = context.traceparent();
        // SAFETY: "`buf` valid for `len` bytes", and len holds the 55
        // bytes and the NUL.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), TRACEPARENT_LEN);
            *buf.add(TRACEPARENT_LEN) = 0;
        }
        Ok(())
    })
}

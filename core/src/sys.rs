//! The only place the producer makes system calls, and the one place that
//! knows which OS it runs on.
//!
//! user_events exist only on Linux. There (`linux.rs`), each wrapper is a
//! thin, typed shell over one libc call and returns the raw errno on
//! failure, so callers can map it to an error that says what to do.
//! Elsewhere (`unsupported.rs`) the same functions compile and fail with
//! `ENOSYS`, no descriptor can exist, and [`OS_HAS_USER_EVENTS`] is false,
//! so [`status()`](crate::status()) says "Linux only" before any of them is
//! reached: registration fails, no enable bit is ever set, and an emit is
//! its one load.
//!
//! The rest of the crate uses the names below on every OS, and no `cfg`.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(not(target_os = "linux"))]
mod unsupported;
#[cfg(not(target_os = "linux"))]
pub use unsupported::*;

pub use crate::errno::Errno;

/// A descriptor's number, as the kernel hands them out: a C `int`, which is
/// what `std::os::fd::RawFd` is on every Unix.
pub type RawFd = std::ffi::c_int;

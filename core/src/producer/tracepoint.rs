//! A tracepoint: an enable word the kernel writes, and a registration.
//!
//! The kernel sets bit 0 of the enable word while any tracer (ftrace, perf)
//! is attached, so `enabled()` is one relaxed load. A `Tracepoint` made with
//! [`Tracepoint::new`] starts with a *pending* bit set instead, so its first
//! `enabled()` is true and the first emit registers it: a `static`
//! tracepoint needs no set-up call. Registration clears the pending bit
//! whether it succeeds or not, so an unavailable kernel costs one failed
//! attempt, which `emit` reports, and then one load per check; calling
//! [`Tracepoint::register`] again retries.
//!
//! # Memory safety
//! The kernel writes into the enable word until it is unregistered, even
//! after the memory is freed or reused. So only `&'static` tracepoints
//! register through the safe API; heap ones go through
//! [`DynamicTracepoint`](super::DynamicTracepoint), which unregisters before
//! it frees, and leaks the word if the kernel refuses.

use std::borrow::Cow;
use std::ffi::CString;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use super::data_file;
use super::field::{format_string, Field};
use super::payload::write_event;
use super::value::Value;
use crate::abi::{self, UserReg, UserUnreg};
use crate::sys::{self, Errno};
use crate::Error;

/// Bit the kernel sets while a tracer is attached.
const KERNEL_BIT: u8 = 0;
/// Set until the first registration attempt, so that attempt happens.
const PENDING_BIT: u32 = 1 << 31;
/// In `registration`: set once registered; the low 32 bits are the index.
const REGISTERED: u64 = 1 << 32;

/// Serialises registration and unregistration (both cold).
static REGISTRY: Mutex<()> = Mutex::new(());

/// The word the kernel writes. Alone in its 8 bytes: the kernel's `set_bit`
/// works on the containing `long`.
#[repr(C, align(8))]
struct EnableWord(AtomicU32);

/// Options that change how the kernel registers an event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegisterOptions {
    /// `USER_EVENT_REG_PERSIST`: the event stays after the last process
    /// unregisters it, until deleted. Needs CAP_PERFMON.
    pub persist: bool,
    /// `USER_EVENT_REG_MULTI_FORMAT`: allow the same name with other fields
    /// (as `user_events_multi/NAME.ID`). Falls back to a normal registration
    /// on kernels that reject the flag (before 6.10).
    pub multi_format: bool,
}

impl RegisterOptions {
    const fn flags(self) -> u16 {
        (if self.persist { abi::USER_EVENT_REG_PERSIST } else { 0 })
            | (if self.multi_format { abi::USER_EVENT_REG_MULTI_FORMAT } else { 0 })
    }
}

/// A user_events tracepoint. Put it in a `static`, or use
/// [`DynamicTracepoint`](super::DynamicTracepoint) for run-time definitions.
pub struct Tracepoint {
    enable: EnableWord,
    registration: AtomicU64,
    name: Cow<'static, str>,
    fields: Cow<'static, [Field]>,
    options: RegisterOptions,
}

impl Tracepoint {
    /// A tracepoint named `name` with `fields`; it registers on first emit,
    /// or on [`register`](Self::register).
    pub const fn new(name: &'static str, fields: &'static [Field]) -> Self {
        Tracepoint {
            enable: EnableWord(AtomicU32::new(PENDING_BIT)),
            registration: AtomicU64::new(0),
            name: Cow::Borrowed(name),
            fields: Cow::Borrowed(fields),
            options: RegisterOptions { persist: false, multi_format: false },
        }
    }

    /// The same tracepoint with other registration options.
    pub const fn with_options(mut self, options: RegisterOptions) -> Self {
        self.options = options;
        self
    }

    pub(crate) fn new_dynamic(name: String, fields: Vec<Field>, options: RegisterOptions) -> Self {
        Tracepoint {
            enable: EnableWord(AtomicU32::new(0)),
            registration: AtomicU64::new(0),
            name: Cow::Owned(name),
            fields: Cow::Owned(fields),
            options,
        }
    }

    /// Whether a tracer is attached (or the first registration is pending).
    #[inline(always)]
    pub fn enabled(&self) -> bool {
        self.enable.0.load(Ordering::Relaxed) != 0
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The format string given to the kernel, e.g. `ev u32 a;__rel_loc char[] b`.
    pub fn format(&self) -> Result<String, Error> {
        format_string(&self.name, &self.fields)
    }

    pub fn is_registered(&self) -> bool {
        self.registration.load(Ordering::Acquire) & REGISTERED != 0
    }

    /// The address of the enable word, for bindings that read it directly
    /// (the C macros, Java's VarHandle). Nonzero means enabled.
    pub fn enable_word(&self) -> *const u32 {
        self.enable.0.as_ptr()
    }

    /// Registers with the kernel (again, if an earlier attempt failed).
    /// Registering a registered tracepoint does nothing.
    pub fn register(&'static self) -> Result<(), Error> {
        // SAFETY: a 'static tracepoint outlives every kernel write.
        unsafe { self.register_in_place() }
    }

    /// Registers the enable word at its current address.
    ///
    /// # Safety
    /// `self` must stay at this address, allocated, until it has been
    /// unregistered successfully.
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn register_in_place(&self) -> Result<(), Error> {
        let _guard = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        if self.is_registered() {
            return Ok(());
        }
        // Whatever happens now, the pending bit has done its job.
        let result = self.register_locked();
        self.enable.0.fetch_and(!PENDING_BIT, Ordering::Relaxed);
        if result.is_ok() {
            crate::handshake::announce(&self.name, || self.enabled());
        }
        result
    }

    fn register_locked(&self) -> Result<(), Error> {
        let format = format_string(&self.name, &self.fields)?;
        data_file::with_fd_for_registration(|fd| self.register_with(fd, format))
    }

    fn register_with(&self, fd: std::os::fd::RawFd, format: String) -> Result<(), Error> {
        let name_args = CString::new(format.clone()).expect("validated names contain no NUL");
        let mut flags = self.options.flags();
        loop {
            let mut reg = UserReg {
                size: std::mem::size_of::<UserReg>() as u32,
                enable_bit: KERNEL_BIT,
                enable_size: 4,
                flags,
                enable_addr: self.enable.0.as_ptr() as u64,
                name_args: name_args.as_ptr() as u64,
                write_index: 0,
            };
            match sys::register(fd, &mut reg) {
                Ok(()) => {
                    // ATOMICS: Release pairs with the load in
                    // `write_if_enabled`: who sees REGISTERED sees the index.
                    self.registration.store(REGISTERED | u64::from(reg.write_index), Ordering::Release);
                    return Ok(());
                }
                // Kernels before 6.10 reject the flag they do not know.
                Err(Errno(libc::EINVAL)) if flags & abi::USER_EVENT_REG_MULTI_FORMAT != 0 => {
                    flags &= !abi::USER_EVENT_REG_MULTI_FORMAT;
                }
                Err(errno) => return Err(self.registration_error(errno, format)),
            }
        }
    }

    fn registration_error(&self, errno: Errno, ours: String) -> Error {
        let event = self.name.to_string();
        match errno.0 {
            libc::EADDRINUSE => Error::FieldsMismatch { registered: super::registered_format(&event), ours, event },
            libc::EMFILE => Error::TooManyEvents { event },
            libc::EPERM | libc::EACCES => Error::PermissionDenied { op: "registration", event },
            _ => Error::Kernel { op: "registration", event, errno },
        }
    }

    /// Stops the kernel writing the enable word; the tracepoint is then
    /// disabled until registered again.
    pub fn unregister(&self) -> Result<(), Error> {
        let _guard = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        if !self.is_registered() {
            return Ok(());
        }
        data_file::with_fd_for_unregistration(|fd| {
            let unreg = UserUnreg {
                size: std::mem::size_of::<UserUnreg>() as u32,
                disable_bit: KERNEL_BIT,
                disable_addr: self.enable.0.as_ptr() as u64,
                ..Default::default()
            };
            match sys::unregister(fd, &unreg) {
                // ENOENT: the kernel no longer knows this word (e.g. a child
                // whose enablers were not copied at fork); it will not write
                // it either way.
                Ok(()) | Err(Errno(libc::ENOENT)) => {
                    self.registration.store(0, Ordering::SeqCst);
                    Ok(())
                }
                Err(errno) => Err(Error::Kernel { op: "unregistration", event: self.name.to_string(), errno }),
            }
        })
    }

    /// Emits one event if a tracer is attached; registers first if this is
    /// the first use. `values` must match the fields in order and type.
    #[inline]
    pub fn emit(&'static self, values: &[Value<'_>]) -> Result<(), Error> {
        if !self.enabled() {
            return Ok(());
        }
        if !self.is_registered() {
            self.register()?;
        }
        self.write_if_enabled(values)
    }

    /// Writes if registered and enabled; an unregistered tracepoint (the
    /// kernel unavailable) silently does nothing, as when no one listens.
    #[inline]
    pub(crate) fn write_if_enabled(&self, values: &[Value<'_>]) -> Result<(), Error> {
        if self.enable.0.load(Ordering::Relaxed) & (1 << KERNEL_BIT) == 0 {
            return Ok(());
        }
        let guard = data_file::EmitGuard::enter();
        // ATOMICS: SeqCst (after the guard's SeqCst increment) pairs with
        // the unregistration's clear: see `data_file::close_when_idle`. It
        // also acquires the Release store of a registration, so the index
        // and the descriptor read after it are current.
        let registration = self.registration.load(Ordering::SeqCst);
        if registration & REGISTERED == 0 {
            return Ok(());
        }
        let Some(fd) = guard.fd() else { return Ok(()) };
        write_event(fd, registration as u32, &self.name, &self.fields, values)
    }
}

impl std::fmt::Debug for Tracepoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracepoint")
            .field("name", &self.name)
            .field("fields", &self.fields)
            .field("registered", &self.is_registered())
            .field("enabled", &self.enabled())
            .finish()
    }
}

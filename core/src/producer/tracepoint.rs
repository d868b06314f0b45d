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
//! # Safety
//! The kernel writes into the enable word until it is unregistered, even
//! after the memory is freed or reused. So only `&'static` tracepoints
//! register through the safe API; heap ones go through
//! [`DynamicTracepoint`](super::DynamicTracepoint), which unregisters before
//! it frees, and leaks the word if the kernel refuses.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use super::field::Field;
use super::registration::Registration;
use super::value::Value;
use crate::abi;
use crate::Error;

/// Set until the first registration attempt, so that attempt happens.
const PENDING_BIT: u32 = 1 << 31;

/// The word the kernel writes. Alone in its 8 bytes: the kernel's `set_bit`
/// works on the containing `long`.
#[repr(C, align(8))]
pub(crate) struct EnableWord(pub(crate) AtomicU32);

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
    pub(crate) const fn flags(self) -> u16 {
        (if self.persist { abi::USER_EVENT_REG_PERSIST } else { 0 })
            | (if self.multi_format { abi::USER_EVENT_REG_MULTI_FORMAT } else { 0 })
    }
}

/// A user_events tracepoint. Put it in a `static`, or use
/// [`DynamicTracepoint`](super::DynamicTracepoint) for run-time definitions.
pub struct Tracepoint {
    enable: EnableWord,
    registration: Registration,
}

impl Tracepoint {
    /// A tracepoint named `name` with `fields`; it registers on first emit,
    /// or on [`register`](Self::register).
    pub const fn new(name: &'static str, fields: &'static [Field]) -> Self {
        Tracepoint {
            enable: EnableWord(AtomicU32::new(PENDING_BIT)),
            registration: Registration::new_static(name, fields),
        }
    }

    /// The same tracepoint with other registration options.
    pub const fn with_options(mut self, options: RegisterOptions) -> Self {
        self.registration.options = options;
        self
    }

    pub(crate) fn new_dynamic(definition: super::Definition, options: RegisterOptions) -> Self {
        Tracepoint { enable: EnableWord(AtomicU32::new(0)), registration: Registration::new(definition, options) }
    }

    pub(crate) fn placeholder() -> Self {
        Tracepoint { enable: EnableWord(AtomicU32::new(0)), registration: Registration::placeholder() }
    }

    /// Checks values as an emit would, and writes nothing.
    pub fn validate(&self, values: &[super::Value<'_>]) -> Result<(), Error> {
        self.registration.validate(values)
    }

    /// Whether a tracer is attached (or the first registration is pending).
    #[inline(always)]
    pub fn enabled(&self) -> bool {
        self.enable.0.load(Ordering::Relaxed) != 0
    }

    /// The full event name, as tracers see it.
    pub fn name(&self) -> &str {
        self.registration.name()
    }

    /// The fields, in payload order.
    pub fn fields(&self) -> &[Field] {
        self.registration.fields()
    }

    /// The format string given to the kernel, e.g. `ev u32 a;__rel_loc char[] b`.
    pub fn format(&self) -> Result<String, Error> {
        self.registration.format().map(Into::into)
    }

    /// Whether the kernel currently has this tracepoint registered.
    pub fn is_registered(&self) -> bool {
        self.registration.is_registered_at(&self.enable.0)
    }

    /// The address of the enable word, for bindings that read it directly
    /// (Java's VarHandle, Python). Nonzero means enabled.
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
    pub(crate) unsafe fn register_in_place(&self) -> Result<(), Error> {
        // Whatever happens, the pending bit has done its job.
        // SAFETY: `register` needs the word kept in place until it is
        // unregistered; the word is inline in `self`, which our caller keeps
        // "at this address, allocated, until it has been unregistered
        // successfully".
        unsafe {
            self.registration.register(&self.enable.0, || {
                self.enable.0.fetch_and(!PENDING_BIT, Ordering::Relaxed);
            })
        }
    }

    /// Stops the kernel writing the enable word; the tracepoint is then
    /// disabled until registered again.
    pub fn unregister(&self) -> Result<(), Error> {
        self.registration.unregister(&self.enable.0)
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
        self.registration.write_if_enabled(&self.enable.0, values)
    }
}

impl std::fmt::Debug for Tracepoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracepoint")
            .field("name", &self.name())
            .field("fields", &self.fields())
            .field("registered", &self.is_registered())
            .field("enabled", &self.enabled())
            .finish()
    }
}

//! Tracepoints whose enable word lives in memory the caller owns.
//!
//! A C program declares its events as structs in its own data, and
//! `USERTRACE_ENABLED(ev)` must be one load of a word at a fixed offset in
//! that struct: no pointer to follow into our heap. So the kernel has to
//! write the caller's word, and the caller has to promise what the kernel
//! needs: the word stays where it is, allocated, until it is unregistered.
//! That promise is why [`ExternalTracepoint::new`] is `unsafe`.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::definition::Definition;
use super::field::Field;
use super::registration::Registration;
use super::tracepoint::RegisterOptions;
use super::value::Value;
use crate::Error;

/// A run-time tracepoint that registers a word it does not own.
pub struct ExternalTracepoint {
    word: NonNull<AtomicU32>,
    registration: Registration,
}

// SAFETY: the word is only touched through atomics, and the registration
// is Sync; the caller's contract (see `new`) keeps the word alive.
unsafe impl Send for ExternalTracepoint {}
// SAFETY: as above.
unsafe impl Sync for ExternalTracepoint {}

impl ExternalTracepoint {
    /// A tracepoint for `definition` on the caller's `word`; nothing is
    /// registered yet.
    ///
    /// # Safety
    /// `word` must be valid for atomic reads and writes, 4-byte aligned, and
    /// only ever accessed atomically (the kernel sets and clears its bit 0
    /// at any time). From the first [`register`](Self::register) it must
    /// stay at this address, allocated, until [`unregister`](Self::unregister)
    /// returns `Ok` or this value is dropped; if unregistration fails, the
    /// word must never be freed or reused.
    pub unsafe fn new(
        word: NonNull<AtomicU32>,
        definition: Definition,
        options: RegisterOptions,
    ) -> Self {
        ExternalTracepoint { word, registration: Registration::new(definition, options) }
    }

    fn word(&self) -> &AtomicU32 {
        // SAFETY: `new`'s contract keeps the word valid for our lifetime.
        unsafe { self.word.as_ref() }
    }

    /// Registers `word` with the kernel; retries if an earlier attempt
    /// failed, does nothing if registered.
    pub fn register(&self) -> Result<(), Error> {
        // SAFETY: `new`'s contract keeps the word in place until it is
        // unregistered, and Drop unregisters.
        unsafe { self.registration.register(self.word(), || ()) }
    }

    /// Stops the kernel writing the word (and clears it). Check the result
    /// before freeing the word.
    pub fn unregister(&self) -> Result<(), Error> {
        self.registration.unregister(self.word())
    }

    /// Whether a tracer is attached: one load of the caller's word.
    #[inline(always)]
    pub fn enabled(&self) -> bool {
        self.word().load(Ordering::Relaxed) != 0
    }

    /// Checks values as [`emit`](Self::emit) would, and writes nothing.
    pub fn validate(&self, values: &[Value<'_>]) -> Result<(), Error> {
        self.registration.validate(values)
    }

    /// Emits one event if registered and a tracer is attached.
    #[inline]
    pub fn emit(&self, values: &[Value<'_>]) -> Result<(), Error> {
        self.registration.write_if_enabled(self.word(), values)
    }

    /// The full event name, as tracers see it.
    pub fn name(&self) -> &str {
        self.registration.name()
    }

    /// The fields, in payload order.
    pub fn fields(&self) -> &[Field] {
        self.registration.fields()
    }

    /// Whether the kernel currently has this tracepoint registered.
    pub fn is_registered(&self) -> bool {
        self.registration.is_registered()
    }
}

impl Drop for ExternalTracepoint {
    fn drop(&mut self) {
        // A failure cannot be reported from here: owners that free the word
        // afterwards call `unregister` first and check it (see `new`).
        let _ = self.unregister();
    }
}

impl std::fmt::Debug for ExternalTracepoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalTracepoint")
            .field("word", &self.word)
            .field("registration", &self.registration)
            .field("enabled", &self.enabled())
            .finish()
    }
}

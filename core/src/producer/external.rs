//! Tracepoints whose enable word lives in memory the caller owns.
//!
//! A C program declares its events as structs in its own data, and
//! `USERTRACE_ENABLED(ev)` must be one load of a word at a fixed offset in
//! that struct: no pointer to follow into our heap. So the kernel has to
//! write the caller's word, and the caller has to promise what the kernel
//! needs: the word stays where it is, allocated, until it is unregistered.
//! That promise is why [`ExternalTracepoint::new`] is `unsafe`.
//!
//! # Safety
//! The word is the caller's, under [`ExternalTracepoint::new`]'s contract:
//! valid, aligned and only accessed atomically, and in place from the first
//! registration until unregistration succeeds. Everything unsafe here rests
//! on that promise.
#![allow(unsafe_code)]

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::definition::Definition;
use super::field::Field;
use super::registration::Registration;
use super::span::Begun;
use super::tracepoint::RegisterOptions;
use super::value::Value;
use crate::trace_context::TraceContext;
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

    /// Begins a span on this tracepoint, defined by
    /// [`Definition::span_begin`]: emits a new id, then `values`, and
    /// returns the id to end it with. Returns 0, and emits nothing, while
    /// nobody listens: the C API's span macros reach it only after their
    /// own load of the word.
    #[inline]
    pub fn begin_span(&self, values: &[Value<'_>]) -> Result<u64, Error> {
        super::span::begin_with(self.enabled(), values, |all| self.emit(all))
    }

    /// Begins a span on this tracepoint under `parent` (a span of this
    /// process or another; a new trace under `None` or an invalid one),
    /// writing its trace context: see [`Begun`]. While nobody listens it
    /// writes nothing and hands `parent` on.
    #[inline]
    pub fn begin_span_in(&self, parent: Option<&TraceContext>, values: &[Value<'_>]) -> Result<Begun, Error> {
        super::span::begin_in_with(self.enabled(), parent, values, |all| self.emit(all))
    }

    /// Ends span `id` on this tracepoint, defined by
    /// [`Definition::span_end`]; nothing for id 0 or while nobody listens.
    #[inline]
    pub fn end_span(&self, id: u64) -> Result<(), Error> {
        super::span::end_with(id, id != 0 && self.enabled(), &[], |all| self.emit(all))
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
        self.registration.is_registered_at(self.word())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_on_a_word_nobody_set_is_not_begun_and_ending_it_writes_nothing() {
        let word = Box::new(AtomicU32::new(0));
        let definition = Definition::span_begin("external", "work", vec![]).unwrap();
        // SAFETY: the word outlives the tracepoint (dropped after it), and is
        // never registered.
        let begin = unsafe { ExternalTracepoint::new(NonNull::from(&*word), definition, RegisterOptions::default()) };
        assert_eq!(begin.begin_span(&[]).unwrap(), 0);
        let end_word = Box::new(AtomicU32::new(0));
        let definition = Definition::span_end("external").unwrap();
        // SAFETY: as above.
        let end = unsafe { ExternalTracepoint::new(NonNull::from(&*end_word), definition, RegisterOptions::default()) };
        end.end_span(0).unwrap();
        end.end_span(7).unwrap();
        assert_eq!(end.fields()[0].name, crate::span::SPAN_END_FIELD);
    }
}

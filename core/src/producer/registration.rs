//! The registration of one event's enable word: the name and fields it is
//! registered with, the write index the kernel gave (or the shared-memory
//! slot, see [`crate::transport`]), and the calls that register, unregister
//! and write.
//!
//! It does not own the word. [`Tracepoint`](super::Tracepoint) keeps its
//! word inline, [`ExternalTracepoint`](super::ExternalTracepoint) in memory
//! its caller owns (a C struct); both pass the word to every call here, and
//! both answer for keeping it valid while registered.
//!
//! # Safety
//! [`Registration::register`] is `unsafe`: the kernel writes the enable
//! word until it is unregistered, freed or not, so its caller must keep the
//! word in place until then. Nothing else here is unsafe.
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::ffi::CString;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use super::data_file;
use super::definition::Definition;
use super::field::{format_string, Field};
use super::handoff::{self, WordState};
use super::in_flight::wait_for_emits;
use super::payload::write_event;
use super::shm;
use super::tracepoint::RegisterOptions;
use super::value::Value;
use super::registrar;
use crate::sys::{Errno, RawFd};
use crate::transport::{chosen, Transport};
use crate::Error;

/// Bit the kernel sets while a tracer is attached.
pub(crate) const KERNEL_BIT: u8 = 0;
/// In `state`: set once registered; the low 32 bits are the write index.
const REGISTERED: u64 = 1 << 32;
/// In `state`, with [`REGISTERED`]: registered through shared memory; the
/// low 32 bits are the registry slot.
const SHARED_MEMORY: u64 = 1 << 33;

/// In `state`, without [`REGISTERED`]: waiting for a recorder to hand
/// over `user_events_data` (see [`handoff`]); the write index is in the
/// handoff's table until the first emit adopts it.
const WAITING: u64 = 1 << 34;

/// Serialises registration and unregistration (both cold).
static REGISTRY: Mutex<()> = Mutex::new(());

pub(crate) struct Registration {
    state: AtomicU64,
    name: Cow<'static, str>,
    fields: Cow<'static, [Field]>,
    /// Built when a run-time definition was checked; a `static` one's is
    /// built (and checked) at its first registration, as const code can't.
    format: Option<String>,
    pub(crate) options: RegisterOptions,
}

impl Registration {
    pub(crate) const fn new_static(name: &'static str, fields: &'static [Field]) -> Self {
        Registration {
            state: AtomicU64::new(0),
            name: Cow::Borrowed(name),
            fields: Cow::Borrowed(fields),
            format: None,
            options: RegisterOptions { persist: false, multi_format: false },
        }
    }

    pub(crate) fn new(definition: Definition, options: RegisterOptions) -> Self {
        let (name, fields, format) = definition.into_parts();
        Registration {
            state: AtomicU64::new(0),
            name: Cow::Owned(name),
            fields: Cow::Owned(fields),
            format: Some(format),
            options,
        }
    }

    /// A registration of nothing, which the kernel never sees.
    pub(crate) fn placeholder() -> Self {
        Registration::new_static("", &[])
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn fields(&self) -> &[Field] {
        &self.fields
    }

    pub(crate) fn format(&self) -> Result<Cow<'_, str>, Error> {
        match &self.format {
            Some(format) => Ok(Cow::Borrowed(format)),
            None => format_string(&self.name, &self.fields).map(Cow::Owned),
        }
    }

    /// Checks values as a write would, without writing.
    pub(crate) fn validate(&self, values: &[Value<'_>]) -> Result<(), Error> {
        super::payload::validate_values(&self.name, &self.fields, values).map(drop)
    }

    pub(crate) fn is_registered(&self) -> bool {
        self.state.load(Ordering::Acquire) & REGISTERED != 0
    }

    /// Whether the kernel has it registered, counting a handoff's
    /// registration not adopted yet.
    pub(crate) fn is_registered_at(&self, word: &AtomicU32) -> bool {
        let state = self.state.load(Ordering::Acquire);
        state & REGISTERED != 0 || (state & WAITING != 0 && matches!(handoff::word_state(word), WordState::Registered(_)))
    }

    /// Registers `word` with the kernel; does nothing if registered.
    /// `after` runs under the registry lock whatever the outcome (the
    /// static tracepoint clears its pending bit there).
    ///
    /// # Safety
    /// `word` must stay at this address, allocated, until `unregister`
    /// succeeds: the kernel writes it until then, freed or not.
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn register(&self, word: &AtomicU32, after: impl FnOnce()) -> Result<(), Error> {
        let result = {
            let _guard = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
            if self.is_registered() || self.still_waiting(word) {
                return Ok(());
            }
            let result = self.format().and_then(|format| match chosen()?.transport {
                Transport::UserEvents => self.register_user_events(word, &format),
                Transport::SharedMemory => self.register_shared(word, &format),
            });
            after();
            result
        };
        // The handshake may wait (up to its limit) for a recorder to attach:
        // never under the lock, which would stall every other thread's
        // registration for as long.
        if result.is_ok() && self.state.load(Ordering::Relaxed) & WAITING == 0 {
            crate::handshake::announce(&self.name, || word.load(Ordering::Relaxed) != 0);
        }
        result
    }

    /// Registers over user_events; with no `user_events_data` here and
    /// the setting asking for user_events, waits for a recorder to hand
    /// one over ([`handoff`]): Ok, and off until then.
    fn register_user_events(&self, word: &AtomicU32, format: &str) -> Result<(), Error> {
        loop {
            let status = match data_file::with_fd_for_registration(|fd| self.register_with(fd, word, format)) {
                Err(Error::Unavailable(status)) if handoff::awaits(&status) => status,
                other => return other,
            };
            if handoff::wait(word, format, self.options.flags(), &status)? == handoff::Wait::Pending {
                self.state.store(WAITING, Ordering::Release);
                return Ok(());
            }
        }
    }

    /// Whether this registration waits for a handoff, or was registered by
    /// one; if the handoff's registration failed, it is forgotten, so that
    /// this one is tried again (and says why).
    fn still_waiting(&self, word: &AtomicU32) -> bool {
        if self.state.load(Ordering::Acquire) & WAITING == 0 {
            return false;
        }
        if handoff::word_state(word) == WordState::Unknown {
            // Unless an emit adopted its index meanwhile: registered, then.
            return self.state.compare_exchange(WAITING, 0, Ordering::Release, Ordering::Relaxed).is_err();
        }
        true
    }

    fn register_with(&self, fd: RawFd, word: &AtomicU32, format: &str) -> Result<(), Error> {
        let name_args = CString::new(format).expect("validated names contain no NUL");
        match registrar::register(fd, word.as_ptr() as u64, &name_args, self.options.flags()) {
            Ok(index) => {
                // ATOMICS: Release pairs with the load in
                // `write_if_enabled`: who sees REGISTERED sees the index.
                self.state.store(REGISTERED | u64::from(index), Ordering::Release);
                Ok(())
            }
            Err(errno) => Err(self.registration_error(errno, format.to_owned())),
        }
    }

    /// Registers `word` in this process's shared-memory registry: a
    /// recorder finds it there and writes it.
    fn register_shared(&self, word: &AtomicU32, format: &str) -> Result<(), Error> {
        let slot = shm::register(&self.name, format, word.as_ptr() as u64)?;
        // ATOMICS: Release pairs with the load in `write_if_enabled`, as
        // for the kernel's write index.
        self.state.store(REGISTERED | SHARED_MEMORY | u64::from(slot), Ordering::Release);
        Ok(())
    }

    /// Frees the slot, so that no recorder writes `word` again. Emits stop
    /// first and are waited for, so none writes a record naming the slot
    /// after it could be reused. If a recorder holds the slot too long,
    /// the registration stands, and the error says the word must live on.
    fn unregister_shared(&self, word: &AtomicU32, state: u64) -> Result<(), Error> {
        // ATOMICS: SeqCst, against the emits' SeqCst load (see `in_flight`).
        self.state.store(0, Ordering::SeqCst);
        // If emits do not drain (a stale count after a fork), a record may
        // name a reused slot: a wrong event name, never a bad write.
        let _ = wait_for_emits();
        match shm::unregister(&self.name, state as u32) {
            Ok(()) => {
                // As the kernel does when it unregisters: off until registered again.
                word.fetch_and(!(1 << KERNEL_BIT), Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                self.state.store(state, Ordering::Release);
                Err(e)
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

    /// Stops the kernel writing `word` (it clears the bit as it goes).
    pub(crate) fn unregister(&self, word: &AtomicU32) -> Result<(), Error> {
        let _guard = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        let state = self.state.load(Ordering::Acquire);
        if state & WAITING != 0 {
            return self.unregister_waiting(word);
        }
        if state & REGISTERED == 0 {
            return Ok(());
        }
        if state & SHARED_MEMORY != 0 {
            return self.unregister_shared(word, state);
        }
        self.unregister_kernel(word)
    }

    /// Takes a waiting registration out of the handoff's table; if the
    /// handed descriptor registered it, or an emit adopted it meanwhile,
    /// the kernel unregisters it.
    fn unregister_waiting(&self, word: &AtomicU32) -> Result<(), Error> {
        if let Some(index) = handoff::cancel(word) {
            // Registered as if by us, so that a failed unregistration
            // is tried again as any other.
            self.state.store(REGISTERED | u64::from(index), Ordering::Release);
        }
        // Or adopted by an emit since we looked: REGISTERED either way.
        if self.state.load(Ordering::Acquire) & REGISTERED != 0 {
            return self.unregister_kernel(word);
        }
        self.state.store(0, Ordering::SeqCst);
        Ok(())
    }

    fn unregister_kernel(&self, word: &AtomicU32) -> Result<(), Error> {
        data_file::with_fd_for_unregistration(|fd| {
            match registrar::unregister(fd, word.as_ptr() as u64) {
                // ENOENT: the registrar's `user_event_mm`, which holds every
                // enabler of this process, has none for this word: a fork
                // child whose handler could not register it again. The
                // kernel will not write it either way.
                Ok(()) | Err(Errno(libc::ENOENT)) => {
                    self.state.store(0, Ordering::SeqCst);
                    Ok(())
                }
                Err(errno) => Err(Error::Kernel { op: "unregistration", event: self.name.to_string(), errno }),
            }
        })
    }

    /// Writes if registered and the kernel bit of `word` is set; an
    /// unregistered event (the kernel unavailable) silently does nothing,
    /// as when no one listens.
    #[inline]
    pub(crate) fn write_if_enabled(&self, word: &AtomicU32, values: &[Value<'_>]) -> Result<(), Error> {
        if word.load(Ordering::Relaxed) & (1 << KERNEL_BIT) == 0 {
            return Ok(());
        }
        let guard = data_file::EmitGuard::enter();
        // ATOMICS: SeqCst (after the scope's SeqCst increment) pairs with
        // the unregistration's SeqCst clear: see `in_flight`. It
        // also acquires the Release store of a registration, so the index
        // and the descriptor read after it are current.
        let state = self.state.load(Ordering::SeqCst);
        if state & REGISTERED == 0 {
            if state & WAITING != 0 {
                return self.write_adopted(word, &guard, values);
            }
            return Ok(());
        }
        if state & SHARED_MEMORY != 0 {
            return shm::write(state as u32, &self.name, &self.fields, values);
        }
        let Some(fd) = guard.fd() else { return Ok(()) };
        write_event(fd, state as u32, &self.name, &self.fields, values)
    }
}

impl Registration {
    /// The first emit after a handoff registered `word`: takes its write
    /// index from the handoff's table, then writes.
    #[cold]
    #[inline(never)]
    fn write_adopted(&self, word: &AtomicU32, guard: &data_file::EmitGuard, values: &[Value<'_>]) -> Result<(), Error> {
        let adopted = handoff::adopt(word, |index| {
            // ATOMICS: Release, as a registration's store; under the
            // handoff's lock, so that an unregistration sees one or the other.
            let _ = self.state.compare_exchange(WAITING, REGISTERED | u64::from(index), Ordering::Release, Ordering::Relaxed);
        });
        let (Some(index), Some(fd)) = (adopted, guard.fd()) else { return Ok(()) };
        write_event(fd, index, &self.name, &self.fields, values)
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .field("fields", &self.fields)
            .field("registered", &self.is_registered())
            .finish()
    }
}

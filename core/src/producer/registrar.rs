//! The registrar: the one thread that makes every user_events registration
//! (`DIAG_IOCSREG`) and unregistration (`DIAG_IOCSUNREG`) of the process.
//!
//! # Why one thread
//! The kernel (kernel/trace/trace_events_user.c, 6.12) keeps an enabler in
//! the *calling thread's* `current->user_event_mm`: `current_user_event_mm()`
//! allocates one for a thread that has none and attaches it to that task
//! alone. Threads cloned from it later share it (`user_events_fork` with
//! `CLONE_VM` counts them in its `tasks`); threads that already existed do
//! not. When a thread exits, `user_events_exit` → `user_event_mm_remove`
//! drops its count and, at zero, frees every enabler in it: the kernel
//! stops writing those words. `DIAG_IOCSUNREG` looks only in the calling
//! thread's `user_event_mm` (ENOENT otherwise), so a word registered on one
//! thread and unregistered on another stays written, freed or not. So
//! every call goes to one thread of ours that lives until the process
//! exits: every enabler is in its `user_event_mm`, and unregistering finds
//! it there. Callers send it the request and wait (a cold path).
//!
//! # Fork
//! A child (fork without `CLONE_VM`) gets a copy of the *forking thread's*
//! `user_event_mm` only (`user_event_mm_dup`), which is never the
//! registrar's: the child would have none of its words written. So every
//! registered word is kept in [`WORDS`] (address, `name field;...`,
//! flags, as the kernel needs them), and the fork child handler registers
//! them all again, on the child's only thread (the one that forked), with
//! nothing but `ioctl`s (async-signal-safe), before `fork()` returns
//! there. That thread then owns the child's `user_event_mm`, and every
//! thread the child makes later, its registrar included (started at its
//! first call, from whichever thread), is cloned from it and shares it:
//! the enablers live as long as any thread of the child. Starting the
//! registrar in the handler instead would need `pthread_create` there,
//! which POSIX does not allow (glibc resets its own locks in the child, so
//! it works there in practice, but Rust's thread start allocates and takes
//! std's locks; the registration in the handler needs neither).
//! The list's lock is taken in the prepare handler and released in both
//! the parent and the child, so the child never sees it half-changed.
//!
//! # Safety
//! Unsafe code: the lock around [`WORDS`] (a spin lock, because it must be
//! taken in one fork handler and released in another) and the fork
//! handlers, which touch the list only while holding it.
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};

use super::registration::KERNEL_BIT;
use crate::abi::{UserReg, UserUnreg, USER_EVENT_REG_MULTI_FORMAT};
use crate::sys::{self, Errno, RawFd};

/// One word the kernel has registered, as the fork child registers it again.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Word {
    fd: RawFd,
    address: u64,
    name_args: CString,
    flags: u16,
}

/// The registered words, and the registrar of the process that made it.
struct State {
    words: Vec<Word>,
    #[cfg(target_os = "linux")]
    registrar: Option<thread::Registrar>,
}

/// A lock that one fork handler takes and another releases: no guard
/// crosses the fork. Held only for a list change, an `ioctl` or a send.
struct ForkLock {
    held: AtomicBool,
    state: UnsafeCell<State>,
}

// SAFETY: `state` is reached only through `lock`, which gives one thread
// at a time a guard, or by the fork handlers while they hold `held`.
unsafe impl Sync for ForkLock {}

static WORDS: ForkLock = ForkLock {
    held: AtomicBool::new(false),
    state: UnsafeCell::new(State {
        words: Vec::new(),
        #[cfg(target_os = "linux")]
        registrar: None,
    }),
};

struct Guard(&'static ForkLock);

impl ForkLock {
    fn acquire(&self) {
        // ATOMICS: Acquire pairs with the Release in `release`: who takes
        // the lock sees what the last holder wrote.
        while self.held.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::thread::yield_now();
        }
    }

    fn release(&self) {
        self.held.store(false, Ordering::Release);
    }

    fn lock(&'static self) -> Guard {
        self.acquire();
        Guard(self)
    }
}

impl std::ops::Deref for Guard {
    type Target = State;
    fn deref(&self) -> &State {
        // SAFETY: the guard exists only while its thread holds the lock.
        unsafe { &*self.0.state.get() }
    }
}

impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut State {
        // SAFETY: as above, and `&mut self` makes this the only reference.
        unsafe { &mut *self.0.state.get() }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// What the registrar is asked to do.
enum Request {
    Register { fd: RawFd, address: u64, name_args: CString, flags: u16 },
    Unregister { fd: RawFd, address: u64 },
}

/// Registers the enable word at `address` under `name_args` with `flags`
/// (`ioctl(fd, DIAG_IOCSREG, &user_reg)`) on the registrar; returns the
/// write index. A kernel before 6.10 that rejects
/// `USER_EVENT_REG_MULTI_FORMAT` is asked again without it.
pub(crate) fn register(fd: RawFd, address: u64, name_args: &CStr, flags: u16) -> Result<u32, Errno> {
    submit(Request::Register { fd, address, name_args: name_args.to_owned(), flags })
}

/// Unregisters the enable word at `address` (`ioctl(fd, DIAG_IOCSUNREG,
/// &user_unreg)`) on the registrar: the kernel clears its bit and never
/// writes it again. ENOENT: the registrar's `user_event_mm` has no enabler
/// for it (a fork child whose handler could not register it again).
pub(crate) fn unregister(fd: RawFd, address: u64) -> Result<(), Errno> {
    submit(Request::Unregister { fd, address }).map(drop)
}

/// Makes the call and keeps [`WORDS`] in step, under its lock, so a fork
/// sees the list exactly as the kernel has it.
fn perform(request: Request) -> Result<u32, Errno> {
    let mut state = WORDS.lock();
    match request {
        Request::Register { fd, address, name_args, mut flags } => loop {
            match register_word(fd, address, &name_args, flags) {
                Ok(index) => {
                    state.words.retain(|w| w.address != address);
                    state.words.push(Word { fd, address, name_args, flags });
                    return Ok(index);
                }
                Err(Errno(libc::EINVAL)) if flags & USER_EVENT_REG_MULTI_FORMAT != 0 => flags &= !USER_EVENT_REG_MULTI_FORMAT,
                Err(errno) => return Err(errno),
            }
        },
        Request::Unregister { fd, address } => {
            let unreg = UserUnreg {
                size: std::mem::size_of::<UserUnreg>() as u32,
                disable_bit: KERNEL_BIT,
                disable_addr: address,
                ..Default::default()
            };
            let result = sys::unregister(fd, &unreg);
            if matches!(result, Ok(()) | Err(Errno(libc::ENOENT))) {
                state.words.retain(|w| w.address != address);
            }
            result.map(|()| 0)
        }
    }
}

/// One `DIAG_IOCSREG`, allocating nothing (the fork child handler uses it).
fn register_word(fd: RawFd, address: u64, name_args: &CStr, flags: u16) -> Result<u32, Errno> {
    let mut reg = UserReg {
        size: std::mem::size_of::<UserReg>() as u32,
        enable_bit: KERNEL_BIT,
        enable_size: 4,
        flags,
        enable_addr: address,
        name_args: name_args.as_ptr() as u64,
        write_index: 0,
    };
    sys::register(fd, &mut reg).map(|()| reg.write_index)
}

/// Off Linux there is no user_events, and no thread to keep: the call
/// fails in `sys` as any other.
#[cfg(not(target_os = "linux"))]
fn submit(request: Request) -> Result<u32, Errno> {
    perform(request)
}

#[cfg(target_os = "linux")]
use thread::submit;

#[cfg(target_os = "linux")]
mod thread;

#[cfg(all(test, target_os = "linux"))]
mod tests;

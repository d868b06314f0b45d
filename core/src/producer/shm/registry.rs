//! This process's registry file: a header, then one slot per registered
//! tracepoint (see [`shm_layout`](crate::shm_layout) for the bytes and the
//! slot protocol).
//!
//! The mapping is made once and kept for the life of the process (a
//! recorder may read it any time); [`MAPPING`] holds it, so that the fork
//! child handler can find it without a lock. Slots change only under the
//! registration lock, so one slot is filled or freed at a time.
//!
//! # Safety
//! Every pointer here is into a live mapping of [`REGISTRY_LEN`] bytes,
//! at offsets the layout fixes (each within it, and aligned for the
//! atomic read there: the mapping is page-aligned and every atomic field's
//! offset is a multiple of its size). Mappings are never unmapped while
//! [`MAPPING`] points at them, except by the fork child, which is then the
//! process's only thread.
#![allow(unsafe_code)]

use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::path::ShmPath;
use crate::shm_layout::{
    registry, slot, MAX_DESCRIPTOR_LEN, REGISTRY_HEADER_LEN, REGISTRY_LEN, REGISTRY_MAGIC, SLOTS, SLOT_LEN, UNREGISTER_WAIT_MS,
};
use crate::sys::{self, Errno};

/// This process's registry mapping, or null before the first shared-memory
/// registration.
static MAPPING: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

/// A view of a registry mapping.
#[derive(Clone, Copy)]
pub(crate) struct Registry(NonNull<u8>);

impl Registry {
    /// This process's registry, if it has one.
    pub(crate) fn current() -> Option<Registry> {
        // ATOMICS: Acquire pairs with the Release in `publish`: who sees
        // the pointer sees the header written.
        NonNull::new(MAPPING.load(Ordering::Acquire)).map(Registry)
    }

    /// Makes `self` the process's registry; returns the one it replaces.
    pub(crate) fn publish(self) -> Option<Registry> {
        NonNull::new(MAPPING.swap(self.0.as_ptr(), Ordering::AcqRel)).map(Registry)
    }

    /// Creates and maps the registry file at `path` for process `pid`,
    /// replacing a file of that name. Allocates nothing and makes only
    /// async-signal-safe calls: the fork child uses it. On failure, says
    /// which call failed.
    pub(crate) fn create(path: &ShmPath, pid: u32, instance: u32) -> Result<Registry, (&'static str, Errno)> {
        let path = path.as_cstr();
        // A file of this pid is stale: a crashed process's, or this
        // process's before an exec. Never reused: O_EXCL makes a new one.
        match sys::unlink(path) {
            Ok(()) | Err(Errno(libc::ENOENT)) => {}
            Err(errno) => return Err(("unlink", errno)),
        }
        let fd = sys::create_private_file(path).map_err(|e| ("create", e))?;
        let raw = sys::as_raw_fd(&fd);
        sys::ftruncate(raw, REGISTRY_LEN).map_err(|e| ("ftruncate", e))?;
        let base = sys::mmap_shared(raw, REGISTRY_LEN).map_err(|e| ("mmap", e))?;
        // The mapping stays after the descriptor closes.
        drop(fd);
        let registry = Registry(base);
        registry.u32_at(registry::PID).store(pid, Ordering::Relaxed);
        registry.u32_at(registry::SLOT_COUNT).store(SLOTS as u32, Ordering::Relaxed);
        registry.u64_at(registry::START_TIME).store(start_time(), Ordering::Relaxed);
        registry.u32_at(registry::INSTANCE).store(instance, Ordering::Relaxed);
        registry.u64_at(registry::PID_NAMESPACE).store(crate::shm_layout::own_pid_namespace(), Ordering::Relaxed);
        // The magic last, after a Release fence: a recorder that finds the
        // file between its creation and here sees no magic and looks again
        // later, rather than a pid with no start time, which would read as
        // a process that is gone.
        std::sync::atomic::fence(Ordering::Release);
        // SAFETY: the header's first 8 bytes are inside the fresh mapping,
        // which nothing else in this process references yet.
        unsafe { base.as_ptr().copy_from_nonoverlapping(REGISTRY_MAGIC.as_ptr(), REGISTRY_MAGIC.len()) };
        Ok(registry)
    }

    fn u32_at(&self, offset: usize) -> &AtomicU32 {
        debug_assert!(offset % 4 == 0 && offset + 4 <= REGISTRY_LEN);
        // SAFETY: in the mapping and aligned (see the module doc); the
        // shared words are only accessed atomically by either side.
        unsafe { AtomicU32::from_ptr(self.0.as_ptr().add(offset).cast()) }
    }

    fn u64_at(&self, offset: usize) -> &AtomicU64 {
        debug_assert!(offset % 8 == 0 && offset + 8 <= REGISTRY_LEN);
        // SAFETY: as for `u32_at`.
        unsafe { AtomicU64::from_ptr(self.0.as_ptr().add(offset).cast()) }
    }

    fn slot_offset(index: usize) -> usize {
        REGISTRY_HEADER_LEN + index * SLOT_LEN
    }

    fn state(&self, index: usize) -> &AtomicU32 {
        self.u32_at(Self::slot_offset(index) + slot::STATE)
    }

    /// The instance its file name carries.
    pub(crate) fn instance(&self) -> u32 {
        self.u32_at(registry::INSTANCE).load(Ordering::Relaxed)
    }

    /// A new instance number: the low bits of the monotonic clock, which
    /// differ between two images of one pid (async-signal-safe).
    pub(crate) fn new_instance() -> u32 {
        sys::monotonic_ns() as u32
    }

    /// The pid of the recorder holding this registry, or 0.
    pub(crate) fn recorder(&self) -> u32 {
        // ATOMICS: Acquire, to see what the recorder did before it took
        // the registry (nothing here depends on it yet).
        self.u32_at(registry::RECORDER).load(Ordering::Acquire)
    }

    /// Tells a recorder the slots changed.
    fn bump_generation(&self) {
        // ATOMICS: Release, after the slot's own Release store: a recorder
        // that sees the new generation rereads the slots and sees the change.
        self.u32_at(registry::GENERATION).fetch_add(1, Ordering::Release);
    }

    /// Fills a free slot with `descriptor` and `address`, then makes it
    /// live; `None` if every slot is taken. The caller holds the
    /// registration lock, so no other fill runs.
    pub(crate) fn add(&self, descriptor: &[u8], address: u64) -> Option<u32> {
        debug_assert!(descriptor.len() <= MAX_DESCRIPTOR_LEN);
        // A linear scan: registration is cold, and slots are 1024.
        let index = (0..SLOTS).find(|&i| self.state(i).load(Ordering::Acquire) == slot::STATE_FREE)?;
        let at = Self::slot_offset(index);
        self.u32_at(at + slot::DESCRIPTOR_LEN).store(descriptor.len() as u32, Ordering::Relaxed);
        self.u64_at(at + slot::ENABLE_ADDRESS).store(address, Ordering::Relaxed);
        // SAFETY: the descriptor fits its slot (MAX_DESCRIPTOR_LEN, checked
        // by the caller); the slot is FREE, so no recorder reads it as live.
        unsafe {
            self.0.as_ptr().add(at + slot::DESCRIPTOR).copy_from_nonoverlapping(descriptor.as_ptr(), descriptor.len());
        }
        // ATOMICS: Release: a recorder that reads LIVE with Acquire sees
        // the descriptor and the address.
        self.state(index).store(slot::STATE_LIVE, Ordering::Release);
        self.bump_generation();
        Some(index as u32)
    }

    /// Frees slot `index` by the layout's protocol: LIVE → FREE; while a
    /// recorder holds it BUSY, wait for it, unless that recorder is gone.
    /// `Err(recorder)` if a live recorder held it past the wait: the word
    /// must then stay registered.
    pub(crate) fn remove(&self, index: u32) -> Result<(), u32> {
        let state = self.state(index as usize);
        let deadline = Instant::now() + Duration::from_millis(UNREGISTER_WAIT_MS);
        loop {
            // ATOMICS: AcqRel: Acquire sees the recorder's BUSY → LIVE
            // (its word write done), Release orders our earlier writes
            // before a later refill's.
            match state.compare_exchange(slot::STATE_LIVE, slot::STATE_FREE, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(slot::STATE_BUSY) => {
                    let recorder = self.recorder();
                    // A recorder that no longer exists has no write in flight.
                    let gone = recorder == 0 || !sys::process_exists(recorder);
                    if gone {
                        if state.compare_exchange(slot::STATE_BUSY, slot::STATE_FREE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                            break;
                        }
                        continue;
                    }
                    if Instant::now() >= deadline {
                        return Err(recorder);
                    }
                    std::thread::sleep(Duration::from_micros(100));
                }
                // FREE already, or a value no recorder should write: either
                // way no write is in flight, and the slot is ours again.
                Err(_) => {
                    state.store(slot::STATE_FREE, Ordering::Release);
                    break;
                }
            }
        }
        self.bump_generation();
        Ok(())
    }

    /// Copies every live (or busy) slot of `from` into `self`, as live,
    /// at the same index: a fork child's registry starts with the parent's
    /// tracepoints, whose words the child has copies of at the same
    /// addresses. Allocates nothing.
    pub(crate) fn copy_slots_from(&self, from: Registry) {
        for index in 0..SLOTS {
            let state = from.state(index).load(Ordering::Acquire);
            if state != slot::STATE_LIVE && state != slot::STATE_BUSY {
                continue;
            }
            let at = Self::slot_offset(index);
            // SAFETY: both slots are inside their mappings; `self` is the
            // child's new file, which nobody else maps yet; `from` is only read.
            unsafe { self.0.as_ptr().add(at + 4).copy_from_nonoverlapping(from.0.as_ptr().add(at + 4), SLOT_LEN - 4) };
            self.state(index).store(slot::STATE_LIVE, Ordering::Release);
        }
        // The parent's recorder records the child too (as the kernel copies
        // a parent's enablers into its child): so the child's files are left
        // for it at exit, even if the child exits before it is found.
        // ATOMICS: Release, before the generation's Release that publishes it.
        self.u32_at(registry::RECORDER).store(from.recorder(), Ordering::Release);
        self.bump_generation();
    }

    /// Unmaps this registry.
    ///
    /// # Safety
    /// Nothing uses it afterwards: it is no longer [`MAPPING`], and no
    /// other thread holds it (the fork child, which has none).
    pub(crate) unsafe fn unmap(self) {
        // SAFETY: a whole registry mapping, unused from here, by the caller.
        let _ = unsafe { sys::munmap(self.0, REGISTRY_LEN) };
    }
}

/// This process's start time in clock ticks after boot, field 22 of
/// `/proc/self/stat` (0 if unreadable). Allocates nothing: the fork child
/// needs its own.
pub(crate) fn start_time() -> u64 {
    let Ok(fd) = sys::open_read_only(c"/proc/self/stat") else { return 0 };
    let mut buf = [0u8; 1024];
    let mut len = 0;
    while len < buf.len() {
        match sys::read(sys::as_raw_fd(&fd), &mut buf[len..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => len += n,
        }
    }
    parse_start_time(&buf[..len]).unwrap_or(0)
}

/// Field 22 of a `stat` line. The command (field 2) is in parentheses and
/// may hold spaces and parentheses itself, so fields are counted from the
/// last `)`: field 3 is the first after it.
pub(crate) fn parse_start_time(stat: &[u8]) -> Option<u64> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let field = stat[close + 1..].split(|&b| b == b' ').filter(|f| !f.is_empty()).nth(22 - 3)?;
    field.iter().try_fold(0u64, |n, &b| b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0')))
}

/// Leaves the process without a registry (a fork child that could not make
/// its own).
pub(crate) fn forget_current() {
    MAPPING.store(std::ptr::null_mut(), Ordering::Release);
}

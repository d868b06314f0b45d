//! A thread's ring: the file `PID.TID.ring` this thread writes its records
//! into and one recorder reads (see [`shm_layout`](crate::shm_layout)).
//!
//! Made on the thread's first enabled emit, its pages all allocated and
//! mapped then (no emit pays a page fault), and kept in a thread-local, so
//! an emit touches no lock and no line another thread writes. A full ring
//! drops the record and counts it in `lost`: an emit never waits for the
//! recorder. The emit that takes the ring past a quarter full wakes the
//! recorder, once per crossing, with one datagram it does not wait on. The thread's exit closes the ring; a fork abandons the rings
//! of before it (they are the parent's) by the process epoch.
//!
//! # Safety
//! A ring's pointers are into its own live mapping: the header's words at
//! the layout's offsets (aligned: the mapping is page-aligned and each
//! offset a multiple of its word's size), and the data area at offsets
//! masked by its power-of-two length, so every write stays inside. Only
//! the owning thread writes the data area and `head`; the recorder reads
//! only what `head` published and writes only `tail`. The mapping is
//! unmapped once, by the ring's owner, when the thread-local drops it.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::path::ShmPath;
use super::registry::Registry;
use crate::producer::field::{Field, MAX_FIELDS};
use crate::producer::payload::{lay_out, validate_values, Pieces};
use crate::producer::value::Value;
use crate::shm_layout::{crosses_watermark, ring, RecordHeader, DEFAULT_RING_DATA_LEN, RING_HEADER_LEN, RING_MAGIC};
use crate::sys::{self, Errno};
use crate::Error;

/// Bumped in every fork child: a ring made under another epoch is the
/// parent's, and this process must never write it.
static PROCESS_EPOCH: AtomicU32 = AtomicU32::new(0);

/// The data area of rings made from now on (set from
/// `USERTRACE_SHM_RING_KIB` at the first shared-memory registration).
static DATA_LEN: AtomicUsize = AtomicUsize::new(DEFAULT_RING_DATA_LEN);

/// Whether rings made from now on stamp the TSC (set at the first
/// shared-memory registration; see "Time stamps" in the layout).
static TSC: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_tsc(tsc: bool) {
    TSC.store(tsc, Ordering::Relaxed);
}

/// Called in a fork child (async-signal-safe: one atomic add).
pub(crate) fn abandon_rings_after_fork() {
    PROCESS_EPOCH.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn set_data_len(len: usize) {
    DATA_LEN.store(len, Ordering::Relaxed);
}

thread_local! {
    static RING: RefCell<Option<Ring>> = const { RefCell::new(None) };
}

/// One record for `slot` with `values` into this thread's ring, made if
/// need be. A thread whose ring is being used already (a signal handler
/// that emits inside an emit) or is exiting drops the event.
pub(crate) fn write(slot: u32, event: &str, fields: &[Field], values: &[Value<'_>]) -> Result<(), Error> {
    RING.try_with(|cell| {
        let Ok(mut ring) = cell.try_borrow_mut() else { return Ok(()) };
        let epoch = PROCESS_EPOCH.load(Ordering::Relaxed);
        if ring.as_ref().is_some_and(|r| r.epoch != epoch) {
            // Dropping it unmaps the parent's ring and leaves it alone.
            *ring = None;
        }
        let ring = match &mut *ring {
            Some(ring) => ring,
            none => none.insert(Ring::create(epoch)?),
        };
        ring.write(slot, event, fields, values)
    })
    .unwrap_or(Ok(()))
}

struct Ring {
    base: NonNull<u8>,
    data_len: usize,
    /// The producer's own copy of `head`: nobody else writes it.
    head: u64,
    /// Its records' times are TSC ticks (else CLOCK_MONOTONIC ns).
    tsc: bool,
    epoch: u32,
    uid: u32,
    pid: u32,
    /// Its registry's instance, which its file name carries.
    instance: u32,
    tid: u32,
}

impl Ring {
    #[cold]
    #[inline(never)]
    fn create(epoch: u32) -> Result<Ring, Error> {
        let (uid, pid, tid) = (sys::euid(), sys::pid(), sys::tid());
        // An emit comes after a registration, which made the registry.
        let instance = Registry::current().map_or(0, |r| r.instance());
        let data_len = DATA_LEN.load(Ordering::Relaxed);
        let path = ShmPath::ring(uid, pid, instance, tid);
        let failed = |op, errno| Error::SharedMemory { op, path: path.display(), errno };
        // A file of this name is a dead thread's of an earlier image of
        // this pid (before an exec): replaced, never reused.
        match sys::unlink(path.as_cstr()) {
            Ok(()) | Err(Errno(libc::ENOENT)) => {}
            Err(errno) => return Err(failed("unlink", errno)),
        }
        let fd = sys::create_private_file(path.as_cstr()).map_err(|e| failed("create", e))?;
        let raw = sys::as_raw_fd(&fd);
        let file_len = RING_HEADER_LEN + data_len;
        if let Err(errno) = sys::ftruncate(raw, file_len) {
            let _ = sys::unlink(path.as_cstr());
            return Err(failed("ftruncate", errno));
        }
        let base = match sys::mmap_shared(raw, file_len) {
            Ok(base) => base,
            Err(errno) => {
                let _ = sys::unlink(path.as_cstr());
                return Err(failed("mmap", errno));
            }
        };
        // Every page ready before the first emit: a page first touched by
        // an emit costs it a fault (a microsecond or more, against tens of
        // nanoseconds), and a large ring would pay that across its whole
        // first lap. This also finds a full tmpfs here, as an error, where a
        // write into a page it cannot back would be a SIGBUS.
        if let Err(errno) = populate(raw, base, file_len) {
            // SAFETY: the mapping just made, which nothing references yet.
            let _ = unsafe { sys::munmap(base, file_len) };
            let _ = sys::unlink(path.as_cstr());
            return Err(failed("populate", errno));
        }
        let tsc = TSC.load(Ordering::Relaxed);
        let ring = Ring { base, data_len, head: 0, tsc, epoch, uid, pid, instance, tid };
        // SAFETY: the magic's 8 bytes start the fresh mapping, which no
        // one else references yet.
        unsafe { base.as_ptr().copy_from_nonoverlapping(RING_MAGIC.as_ptr(), RING_MAGIC.len()) };
        ring.u32_at(ring::PID).store(pid, Ordering::Relaxed);
        ring.u32_at(ring::TID).store(tid, Ordering::Relaxed);
        ring.u32_at(ring::CLOCK).store(if tsc { ring::CLOCK_TSC } else { ring::CLOCK_MONOTONIC }, Ordering::Relaxed);
        // ATOMICS: Release, last: a recorder that reads the length with
        // Acquire sees the rest of the header.
        ring.u64_at(ring::DATA_LEN).store(data_len as u64, Ordering::Release);
        Ok(ring)
    }

    fn u32_at(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: a header offset, in the mapping and aligned (module doc).
        unsafe { AtomicU32::from_ptr(self.base.as_ptr().add(offset).cast()) }
    }

    fn u64_at(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: as for `u32_at`.
        unsafe { AtomicU64::from_ptr(self.base.as_ptr().add(offset).cast()) }
    }

    #[inline]
    fn write(&mut self, slot: u32, event: &str, fields: &[Field], values: &[Value<'_>]) -> Result<(), Error> {
        let len = validate_values(event, fields, values)?;
        let payload_len = len.total();
        let record_len = RecordHeader::len_for(payload_len);
        // ATOMICS: Acquire pairs with the recorder's Release of `tail`
        // after it copied the bytes out: the space is free to overwrite.
        let tail = self.u64_at(ring::TAIL).load(Ordering::Acquire);
        // A `tail` past `head` (a broken recorder) leaves no room, and
        // a full ring drops the record rather than wait.
        let unread = self.head.wrapping_sub(tail);
        let free = (self.data_len as u64).checked_sub(unread);
        if free.is_none_or(|free| record_len as u64 > free) {
            self.u64_at(ring::LOST).fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let header = RecordHeader {
            len: record_len as u32,
            slot,
            time_ns: if self.tsc { sys::tsc() } else { sys::monotonic_ns() },
            cpu: sys::current_cpu(),
            payload_len: payload_len as u32,
        };
        let header = header.to_bytes();
        let mut cursor = Cursor { ring: self, at: self.head };
        cursor.push(&header);
        let mut locs = [0u32; MAX_FIELDS];
        lay_out(&mut cursor, &mut locs, len.fixed, fields, values);
        let padding = record_len - header.len() - payload_len;
        cursor.push(&[0u8; 8][..padding]);
        debug_assert_eq!(cursor.at, self.head + record_len as u64);
        self.head += record_len as u64;
        // ATOMICS: Release after the record's bytes: a recorder that loads
        // `head` with Acquire reads them whole.
        self.u64_at(ring::HEAD).store(self.head, Ordering::Release);
        // After the publish: the recorder woken reads this record too.
        if crosses_watermark(unread, record_len as u64, self.data_len as u64) {
            self.wake_recorder();
        }
        Ok(())
    }

    /// Tells the recorder holding this process that a ring passed its
    /// watermark (the layout's "Waking the recorder"); never waits, and
    /// what fails is ignored: the recorder then reads at its next poll.
    #[cold]
    #[inline(never)]
    fn wake_recorder(&self) {
        let recorder = Registry::current().map_or(0, |r| r.recorder());
        if recorder != 0 {
            let _ = sys::send_datagram(ShmPath::wake(self.uid, recorder).as_cstr(), &[1]);
        }
    }

    /// The data area's byte `at` (of the bytes ever written), wrapped.
    fn data_at(&self, at: u64) -> *mut u8 {
        let offset = (at as usize) & (self.data_len - 1);
        // SAFETY: the offset is below the data area's length, and the data
        // area follows the header inside the mapping.
        unsafe { self.base.as_ptr().add(RING_HEADER_LEN + offset) }
    }
}

/// Allocates and maps every page of a fresh ring mapping: one
/// `MADV_POPULATE_WRITE` (Linux 5.14); before it, the blocks reserved with
/// `fallocate` (so that no write can SIGBUS) and each page written once.
#[cold]
fn populate(fd: sys::RawFd, base: NonNull<u8>, len: usize) -> Result<(), Errno> {
    match sys::populate_write(base, len) {
        Err(Errno(libc::EINVAL)) => {}
        done => return done,
    }
    sys::fallocate(fd, len)?;
    // 4 KiB, the smallest page: a write every 4 KiB reaches every page
    // whatever the page size.
    for offset in (0..len).step_by(4096) {
        // SAFETY: inside the fresh mapping, which nothing else references
        // yet (the recorder waits for the header's length, written after
        // this); it writes the zero the new file already holds there, and
        // its blocks are allocated, so the write cannot fault for space.
        unsafe { base.as_ptr().add(offset).write_volatile(0) };
    }
    Ok(())
}

/// Copies a record's pieces into the ring from `at`, wrapping at its end.
struct Cursor<'r> {
    ring: &'r Ring,
    at: u64,
}

impl Pieces<'_> for Cursor<'_> {
    #[inline]
    fn push(&mut self, bytes: &[u8]) {
        let offset = (self.at as usize) & (self.ring.data_len - 1);
        // A scalar field (most pieces) that does not wrap: one store of its
        // size, not a call to memcpy with a length known only here.
        if bytes.len() == 8 && offset + 8 <= self.ring.data_len {
            let value = u64::from_ne_bytes(bytes.try_into().expect("8 bytes"));
            // SAFETY: the 8 bytes fit before the data area's end, in space
            // that is free (checked against `tail`), unaligned as a record
            // may leave them.
            unsafe { self.ring.data_at(self.at).cast::<u64>().write_unaligned(value) };
            self.at += 8;
            return;
        }
        let first = bytes.len().min(self.ring.data_len - offset);
        // SAFETY: `first` bytes fit before the data area's end, the rest
        // (less than the record, which fits the ring) after its start; the
        // space is free (checked against `tail`), so the recorder is not
        // reading it; a caller's slice never lies in the ring.
        unsafe {
            self.ring.data_at(self.at).copy_from_nonoverlapping(bytes.as_ptr(), first);
            if first < bytes.len() {
                self.ring.data_at(self.at + first as u64).copy_from_nonoverlapping(bytes[first..].as_ptr(), bytes.len() - first);
            }
        }
        self.at += bytes.len() as u64;
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        let file_len = RING_HEADER_LEN + self.data_len;
        if self.epoch == PROCESS_EPOCH.load(Ordering::Relaxed) {
            // ATOMICS: Release after the last `head`: a recorder that sees
            // CLOSED with Acquire drains what is left, then removes the file.
            self.u32_at(ring::CLOSED).store(1, Ordering::Release);
            // Nobody to drain it: the file goes now.
            if Registry::current().is_none_or(|r| r.recorder() == 0) {
                let _ = sys::unlink(ShmPath::ring(self.uid, self.pid, self.instance, self.tid).as_cstr());
            }
        }
        // SAFETY: this ring's whole mapping, which nothing uses once the
        // thread-local drops it.
        let _ = unsafe { sys::munmap(self.base, file_len) };
    }
}

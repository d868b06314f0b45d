//! One producer thread's shared-memory ring, read by the recorder.
//!
//! The layout is `usertrace::shm_layout`'s. Unlike a perf ring, whose
//! writer is the kernel, this one is written by a process we do not trust:
//! it may scribble over anything at any time. So nothing of the mapping is
//! ever borrowed as a Rust slice or read twice: the published bytes are
//! copied out once, and only the copy is parsed ([`records`]), with every
//! length checked against what was copied. The most copied per read is the
//! ring's size, so a producer cannot make us allocate more.
//!
//! # Safety
//! The mapping lives as long as `ShmRing`. Its header words are accessed
//! only through atomics at fixed, aligned offsets inside the header page;
//! the data area only through `copy_nonoverlapping` of ranges that
//! `published_ranges` keeps inside it. A racing writer can change what the
//! copy holds, never where it reads.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use memmap2::{MmapMut, MmapOptions};
use usertrace::shm_layout::{ring, LayoutError, RingClock, RingHeader, RING_HEADER_LEN};

use super::place::Place;
use crate::ring::published_ranges;

/// A mapped ring and what the recorder remembers of it.
pub(crate) struct ShmRing {
    map: MmapMut,
    pub(crate) path: PathBuf,
    place: Arc<Place>,
    name: String,
    inode: u64,
    /// The thread as this host numbers it, under which its events go (its
    /// file and header number it in its own PID namespace).
    pub(crate) host_tid: u32,
    data_len: usize,
    /// The producer's `lost` when last read: losses are reported as they grow.
    lost_seen: u64,
    /// The CPU of the last record read, under which a loss is counted.
    pub(crate) last_cpu: u32,
    /// Its records' times are raw TSC ticks, to convert.
    pub(crate) tsc: bool,
}

impl ShmRing {
    /// Maps the ring file `name` of `place`, open as `file`, checking its
    /// header against the file's length and the pid it should belong to.
    /// `host_tid` translates its thread's tid (identity on the host).
    pub(crate) fn map(file: &File, place: &Arc<Place>, name: &str, pid: u32, host_tid: impl Fn(u32) -> u32) -> Result<ShmRing, LayoutError> {
        let meta = file.metadata().map_err(|_| LayoutError::Truncated { what: "ring file", need: RING_HEADER_LEN, have: 0 })?;
        if !meta.is_file() {
            return Err(LayoutError::BadMagic { what: "ring (not a regular file)" });
        }
        let file_len = meta.len();
        if file_len < RING_HEADER_LEN as u64 {
            return Err(LayoutError::Truncated { what: "ring file", need: RING_HEADER_LEN, have: file_len as usize });
        }
        let mut header = vec![0u8; RING_HEADER_LEN];
        std::io::Read::read_exact(&mut &*file, &mut header)
            .map_err(|_| LayoutError::Truncated { what: "ring header", need: RING_HEADER_LEN, have: 0 })?;
        // Pairs with the producer's Release store of the data length, last.
        std::sync::atomic::fence(Ordering::Acquire);
        let parsed = RingHeader::parse(&header, file_len)?;
        if parsed.pid != pid {
            return Err(LayoutError::BadMagic { what: "ring (of another process)" });
        }
        // Populated: the producer allocated every page, and mapping them now
        // spares the first reads of each a fault.
        // SAFETY: a shared mapping of a regular file of at least this length
        // (checked above); see the module's Safety paragraph for its use.
        let map = unsafe { MmapOptions::new().len(RING_HEADER_LEN + parsed.data_len).populate().map_mut(file) }
            .map_err(|_| LayoutError::Truncated { what: "ring mapping", need: RING_HEADER_LEN + parsed.data_len, have: 0 })?;
        let inode = std::os::unix::fs::MetadataExt::ino(&file.metadata().map_err(|_| LayoutError::Truncated { what: "ring file", need: 0, have: 0 })?);
        let tsc = parsed.clock == RingClock::Tsc;
        let (path, place, name) = (place.path(name), place.clone(), name.to_owned());
        Ok(ShmRing { map, path, place, name, inode, host_tid: host_tid(parsed.tid), data_len: parsed.data_len, lost_seen: 0, last_cpu: 0, tsc })
    }

    fn word64(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: offset is one of the 8-aligned u64 words of the header
        // page, inside the page-aligned mapping that lives as long as self.
        unsafe { &*(self.map.as_ptr().add(offset) as *const AtomicU64) }
    }

    fn word32(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: as in `word64`, for a 4-aligned u32 word.
        unsafe { &*(self.map.as_ptr().add(offset) as *const AtomicU32) }
    }

    /// Removes the ring's file if it is still the one we mapped.
    pub(crate) fn remove_file(&self) {
        self.place.remove_if(&self.name, self.inode);
    }

    /// Whether the thread has exited (it sets this as its last write).
    pub(crate) fn closed(&self) -> bool {
        self.word32(ring::CLOSED).load(Ordering::Acquire) != 0
    }

    /// Whether everything published has been read.
    pub(crate) fn is_empty(&self) -> bool {
        // ATOMICS: Acquire, as in `take`.
        self.word64(ring::HEAD).load(Ordering::Acquire) == self.word64(ring::TAIL).load(Ordering::Relaxed)
    }

    /// Copies the published bytes into `out` (replacing its contents) and
    /// frees them in the ring. A head that makes no sense (behind the tail,
    /// or more than the ring ahead of it) is an error, and the ring is
    /// reset to it so that reading can go on.
    pub(crate) fn take(&mut self, out: &mut Vec<u8>) -> Result<(), LayoutError> {
        out.clear();
        // ATOMICS: Acquire pairs with the producer's Release store of head:
        // the bytes below it were written first (if it keeps the protocol).
        let head = self.word64(ring::HEAD).load(Ordering::Acquire);
        // ATOMICS: only we write tail.
        let tail = self.word64(ring::TAIL).load(Ordering::Relaxed);
        let Ok((a, b)) = published_ranges(self.data_len, tail, head) else {
            self.word64(ring::TAIL).store(head, Ordering::Release);
            return Err(LayoutError::BadRecordLength { len: head.wrapping_sub(tail) as usize, available: self.data_len });
        };
        out.reserve(a.len() + b.len());
        let data = self.map.as_ptr().wrapping_add(RING_HEADER_LEN);
        for range in [a, b] {
            let at = out.len();
            // SAFETY: `range` lies inside the data area (published_ranges
            // bounds it by data_len) and `out` has room for it; the bytes are
            // copied, not borrowed, so a racing writer only changes the copy.
            unsafe {
                std::ptr::copy_nonoverlapping(data.add(range.start), out.as_mut_ptr().add(at), range.len());
                out.set_len(at + range.len());
            }
        }
        // ATOMICS: Release orders our copy before the store that lets the
        // producer reuse the space.
        self.word64(ring::TAIL).store(head, Ordering::Release);
        Ok(())
    }

    /// Records dropped since the last call, as the producer counted them.
    pub(crate) fn new_losses(&mut self) -> u64 {
        let lost = self.word64(ring::LOST).load(Ordering::Relaxed);
        let new = lost.saturating_sub(self.lost_seen);
        self.lost_seen = self.lost_seen.max(lost);
        new
    }
}

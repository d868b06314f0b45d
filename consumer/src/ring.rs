//! The perf ring buffer: finding records between `data_tail` and
//! `data_head`, including ones that wrap around the end.
//!
//! The kernel writes records at `data_head` and publishes them by advancing
//! it; the reader consumes from `data_tail` and frees space by advancing
//! that. Only the published bytes `[tail, head)` are ever borrowed, so the
//! kernel never writes into memory a Rust slice covers.
//! References: include/uapi/linux/perf_event.h, `struct perf_event_mmap_page`.
//!
//! # Safety
//! The ring is mapped shared with the kernel, which writes it concurrently.
//! The metadata page is read only through atomics, and of the data area
//! only the published bytes `[data_tail, data_head)` are borrowed: the
//! kernel does not write them until `data_tail` passes them, which happens
//! only after the borrows end.
#![allow(unsafe_code)]

use std::ops::Range;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{MmapMut, MmapOptions};

use super::error::RingError;
use super::record::HEADER_LEN;

/// One record as it sits in the ring: one slice, or two when it wraps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord<'a> {
    /// The record's bytes up to the end of the ring (all of them if it
    /// does not wrap).
    pub first: &'a [u8],
    /// Empty unless the record wraps around the end of the ring.
    pub second: &'a [u8],
}

impl<'a> RawRecord<'a> {
    /// The record's size in bytes, both pieces together.
    pub fn len(&self) -> usize {
        self.first.len() + self.second.len()
    }

    /// Whether the record has no bytes; a parsed record never does.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The record as one slice: borrowed when it does not wrap, else copied
    /// into `scratch` (parsers need contiguous bytes; wraps are rare).
    pub fn contiguous<'s>(&self, scratch: &'s mut Vec<u8>) -> &'s [u8]
    where
        'a: 's,
    {
        if self.second.is_empty() {
            return self.first;
        }
        scratch.clear();
        scratch.extend_from_slice(self.first);
        scratch.extend_from_slice(self.second);
        scratch
    }
}

/// The byte ranges of a ring of `size` bytes (a power of two) holding the
/// published data `[tail, head)`: up to the end of the ring, then from 0.
pub fn published_ranges(size: usize, tail: u64, head: u64) -> Result<(Range<usize>, Range<usize>), RingError> {
    let len = head.wrapping_sub(tail);
    if head < tail || len > size as u64 || size == 0 {
        return Err(RingError::BadHead { head, tail });
    }
    let start = (tail % size as u64) as usize;
    let len = len as usize;
    if start + len <= size {
        Ok((start..start + len, 0..0))
    } else {
        Ok((start..size, 0..start + len - size))
    }
}

/// Iterates the records of published data given as its two pieces.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    a: &'a [u8],
    b: &'a [u8],
    pos: usize,
    /// Ring offset of `a[0]`, for error messages.
    base: u64,
    failed: bool,
}

impl<'a> Records<'a> {
    /// Records in `a` then `b`, the two ranges of [`published_ranges`];
    /// `base` is `a`'s ring offset, named in errors.
    pub fn new(a: &'a [u8], b: &'a [u8], base: u64) -> Self {
        Records { a, b, pos: 0, base, failed: false }
    }

    fn byte(&self, at: usize) -> u8 {
        if at < self.a.len() {
            self.a[at]
        } else {
            self.b[at - self.a.len()]
        }
    }

    fn slice(&self, range: Range<usize>) -> RawRecord<'a> {
        let n = self.a.len();
        if range.end <= n {
            RawRecord { first: &self.a[range], second: &[] }
        } else if range.start >= n {
            RawRecord { first: &self.b[range.start - n..range.end - n], second: &[] }
        } else {
            RawRecord { first: &self.a[range.start..], second: &self.b[..range.end - n] }
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RawRecord<'a>, RingError>;

    fn next(&mut self) -> Option<Self::Item> {
        let total = self.a.len() + self.b.len();
        if self.failed || self.pos == total {
            return None;
        }
        let size = if self.pos + HEADER_LEN <= total {
            u16::from_ne_bytes([self.byte(self.pos + 6), self.byte(self.pos + 7)])
        } else {
            0
        };
        let end = self.pos + size as usize;
        if (size as usize) < HEADER_LEN || end > total {
            // Nothing after a bad header can be trusted: stop here.
            self.failed = true;
            return Some(Err(RingError::BadRecordSize { offset: self.base + self.pos as u64, size }));
        }
        let record = self.slice(self.pos..end);
        self.pos = end;
        Some(Ok(record))
    }
}

/// A mapped perf ring: one metadata page and 2^n data pages.
pub struct Ring {
    map: MmapMut,
    data_offset: usize,
    data_size: usize,
    scratch: Vec<u8>,
}

// Offsets in `struct perf_event_mmap_page` (the metadata page).
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;
const DATA_OFFSET: usize = 1040;
const DATA_SIZE: usize = 1048;
const _: () = {
    use perf_event_open_sys::bindings::perf_event_mmap_page as P;
    assert!(std::mem::offset_of!(P, data_head) == DATA_HEAD);
    assert!(std::mem::offset_of!(P, data_tail) == DATA_TAIL);
    assert!(std::mem::offset_of!(P, data_offset) == DATA_OFFSET);
    assert!(std::mem::offset_of!(P, data_size) == DATA_SIZE);
};

impl Ring {
    /// Maps `1 + data_pages` pages of the perf event `fd` read-write, which
    /// tells the kernel we advance `data_tail` (it never overwrites unread data).
    pub fn map(fd: BorrowedFd<'_>, data_pages: usize) -> std::io::Result<Ring> {
        let page = page_size();
        // SAFETY: mapping a perf fd shares the kernel's ring; we access the
        // metadata page only through atomics/aligned reads and the data area
        // only within [tail, head), which the kernel does not write.
        let map = unsafe { MmapOptions::new().len((1 + data_pages) * page).map_mut(fd.as_raw_fd())? };
        let mut ring = Ring { map, data_offset: page, data_size: data_pages * page, scratch: Vec::new() };
        // Since Linux 4.1 the page says where the data is; trust it if sane.
        let (offset, size) = (ring.read_u64(DATA_OFFSET) as usize, ring.read_u64(DATA_SIZE) as usize);
        if offset != 0 && size.is_power_of_two() && offset.checked_add(size) == Some(ring.map.len()) {
            (ring.data_offset, ring.data_size) = (offset, size);
        }
        Ok(ring)
    }

    fn atomic(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: offset is one of the 8-aligned u64 fields of the page-aligned
        // metadata page, which lives as long as `self.map`; the kernel accesses
        // it concurrently, hence an atomic.
        unsafe { &*(self.map.as_ptr().add(offset) as *const AtomicU64) }
    }

    fn read_u64(&self, offset: usize) -> u64 {
        self.atomic(offset).load(Ordering::Relaxed)
    }

    /// Gives `reader` each published record, then the bytes they span,
    /// then frees their space. A corrupt header skips the rest of what was
    /// published (it is not in the bytes given either).
    pub fn read(&mut self, reader: &mut impl RecordReader) -> Result<usize, RingError> {
        // ATOMICS: Acquire pairs with the kernel's smp_store_release of
        // data_head in perf_output_put_handle: records below head are
        // fully written before we read them.
        let head = self.atomic(DATA_HEAD).load(Ordering::Acquire);
        // ATOMICS: only we write data_tail; Relaxed reads back our own store.
        let tail = self.read_u64(DATA_TAIL);
        let (ra, rb) = published_ranges(self.data_size, tail, head)?;
        let base = self.data_offset;
        // SAFETY: both ranges lie inside the data area of the mapping and hold
        // published records; the kernel will not write them until data_tail
        // passes them, which happens only after the slices are dropped below.
        let (a, b) = unsafe {
            let data = self.map.as_ptr().add(base);
            (
                std::slice::from_raw_parts(data.add(ra.start), ra.len()),
                std::slice::from_raw_parts(data.add(rb.start), rb.len()),
            )
        };
        let (mut count, mut whole) = (0, 0);
        let mut result = Ok(0);
        for record in Records::new(a, b, tail) {
            match record {
                Ok(record) => {
                    reader.record(record.contiguous(&mut self.scratch), whole);
                    whole += record.len();
                    count += 1;
                }
                Err(e) => result = Err(e),
            }
        }
        let first = &a[..whole.min(a.len())];
        reader.published(first, &b[..whole - first.len()]);
        // ATOMICS: Release orders our reads of the records before the store
        // that lets the kernel (smp_load_acquire-paired via its mb) reuse them.
        self.atomic(DATA_TAIL).store(head, Ordering::Release);
        result.map(|_: usize| count)
    }
}

/// What reads a ring ([`Ring::read`]).
pub trait RecordReader {
    /// A whole record, contiguous; `at` is where it starts in the
    /// published bytes.
    fn record(&mut self, record: &[u8], at: usize);

    /// The published bytes of the records given, in the two pieces the
    /// ring holds them in (the second is empty unless they wrap), while
    /// they are still the ring's: what is written from them here is
    /// written without a copy.
    fn published(&mut self, _first: &[u8], _second: &[u8]) {}
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{build, parse, Record, SampleId};
    use std::os::fd::{AsFd, FromRawFd, OwnedFd};

    /// A ring of `size` bytes holding `records` written from offset `tail`.
    fn ring_with(size: usize, tail: u64, records: &[Vec<u8>]) -> (Vec<u8>, u64) {
        let mut data = vec![0xAAu8; size];
        let mut head = tail;
        for r in records {
            for &b in r {
                data[(head % size as u64) as usize] = b;
                head += 1;
            }
        }
        (data, head)
    }

    fn lost(n: u64) -> Vec<u8> {
        build::lost(1, n, SampleId { id: 1, pid: 2, tid: 3, time: n, cpu: 0 })
    }

    fn read_all(data: &[u8], tail: u64, head: u64) -> Vec<Result<u64, RingError>> {
        let (ra, rb) = published_ranges(data.len(), tail, head).unwrap();
        let mut scratch = Vec::new();
        Records::new(&data[ra], &data[rb], tail)
            .map(|r| {
                r.map(|raw| match parse(raw.contiguous(&mut scratch)).unwrap() {
                    Record::Lost { lost, .. } => lost,
                    other => panic!("{other:?}"),
                })
            })
            .collect()
    }

    #[test]
    fn records_that_wrap_come_back_whole() {
        // LOST records are 56 bytes: starting at 200 in a 256-byte ring the
        // second one straddles the end.
        let records: Vec<Vec<u8>> = (1..=4).map(lost).collect();
        let (data, head) = ring_with(256, 1000 + 144, &records);
        let got: Vec<u64> = read_all(&data, 1144, head).into_iter().map(Result::unwrap).collect();
        assert_eq!(got, vec![1, 2, 3, 4]);

        let (ra, rb) = published_ranges(256, 1144, head).unwrap();
        let wrapped = Records::new(&data[ra], &data[rb], 1144).filter_map(Result::ok).filter(|r| !r.second.is_empty()).count();
        assert_eq!(wrapped, 1);
    }

    #[test]
    fn head_behind_tail_or_beyond_the_ring_is_an_error() {
        assert_eq!(published_ranges(256, 10, 5), Err(RingError::BadHead { head: 5, tail: 10 }));
        assert_eq!(published_ranges(256, 0, 257), Err(RingError::BadHead { head: 257, tail: 0 }));
        assert_eq!(published_ranges(256, 7, 7).unwrap(), (7..7, 0..0));
    }

    /// A ring mapped from a memfd, as the kernel maps a perf event's:
    /// the metadata page, then `pages` data pages.
    fn memfd_ring(pages: usize) -> (OwnedFd, Ring) {
        // SAFETY: a valid NUL-ended name and no flags.
        let fd = unsafe { libc::memfd_create(c"ring".as_ptr(), 0) };
        assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
        // SAFETY: fd is a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        std::fs::File::from(fd.try_clone().unwrap()).set_len(((1 + pages) * page_size()) as u64).unwrap();
        let ring = Ring::map(fd.as_fd(), pages).unwrap();
        (fd, ring)
    }

    /// Writes `records` at `tail` into the data area and publishes them.
    fn publish(ring: &mut Ring, tail: u64, records: &[Vec<u8>]) {
        let (base, size) = (ring.data_offset, ring.data_size);
        let mut head = tail;
        for &b in records.iter().flatten() {
            ring.map[base + (head % size as u64) as usize] = b;
            head += 1;
        }
        ring.atomic(DATA_TAIL).store(tail, Ordering::Relaxed);
        ring.atomic(DATA_HEAD).store(head, Ordering::Release);
    }

    #[derive(Default)]
    struct Kept {
        records: Vec<(usize, Vec<u8>)>,
        published: Vec<u8>,
        pieces: usize,
    }

    impl RecordReader for Kept {
        fn record(&mut self, record: &[u8], at: usize) {
            self.records.push((at, record.to_vec()));
        }
        fn published(&mut self, first: &[u8], second: &[u8]) {
            self.published = [first, second].concat();
            self.pieces = [first, second].iter().filter(|p| !p.is_empty()).count();
        }
    }

    #[test]
    fn a_reader_gets_each_record_where_it_starts_then_their_bytes_as_the_ring_holds_them() {
        let (_fd, mut ring) = memfd_ring(1);
        let size = ring.data_size as u64;
        // Four 56-byte records from 100 bytes before the end: the second wraps.
        let records: Vec<Vec<u8>> = (1..=4).map(lost).collect();
        publish(&mut ring, 10 * size - 100, &records);
        let mut kept = Kept::default();
        assert_eq!(ring.read(&mut kept), Ok(4));
        let at: Vec<usize> = kept.records.iter().map(|(at, _)| *at).collect();
        assert_eq!(at, [0, 56, 112, 168]);
        assert!(kept.records.iter().zip(&records).all(|((_, got), want)| got == want));
        assert_eq!(kept.published, records.concat());
        assert_eq!(kept.pieces, 2);
        // All of it freed: the next read finds nothing.
        let mut again = Kept::default();
        assert_eq!(ring.read(&mut again), Ok(0));
        assert!(again.published.is_empty());
    }

    #[test]
    fn after_a_corrupt_header_the_bytes_given_end_with_the_last_whole_record() {
        let (_fd, mut ring) = memfd_ring(1);
        let mut bad = lost(2);
        bad[6..8].copy_from_slice(&3u16.to_ne_bytes());
        publish(&mut ring, 0, &[lost(1), bad, lost(3)]);
        let mut kept = Kept::default();
        assert_eq!(ring.read(&mut kept), Err(RingError::BadRecordSize { offset: 56, size: 3 }));
        assert_eq!(kept.records.len(), 1);
        assert_eq!(kept.published, lost(1));
        assert_eq!(kept.pieces, 1);
    }

    #[test]
    fn a_corrupt_size_stops_the_walk_with_an_error() {
        let (mut data, head) = ring_with(256, 0, &[lost(1), lost(2)]);
        data[56 + 6..56 + 8].copy_from_slice(&3u16.to_ne_bytes());
        assert_eq!(read_all(&data, 0, head), vec![Ok(1), Err(RingError::BadRecordSize { offset: 56, size: 3 })]);

        data[56 + 6..56 + 8].copy_from_slice(&500u16.to_ne_bytes());
        assert_eq!(read_all(&data, 0, head)[1], Err(RingError::BadRecordSize { offset: 56, size: 500 }));

        // A header cut by head.
        assert_eq!(read_all(&data, 0, 60)[1], Err(RingError::BadRecordSize { offset: 56, size: 0 }));
    }
}

//! Parsing one perf record, as written by the events a session opens.
//!
//! Every event of a session uses the same `sample_type`
//! (IDENTIFIER | TID | TIME | CPU, plus RAW on tracepoints) and
//! `sample_id_all`, so each record's origin and time sit at fixed places:
//! first in a SAMPLE, in a 32-byte trailer on everything else. A
//! tracepoint recorded with its user stack also has CALLCHAIN, which the
//! kernel writes between CPU and RAW: which samples have one is known by
//! their event id, first in the sample ([`parse_with`]).
//! References: include/uapi/linux/perf_event.h, `enum perf_event_type`.

use super::error::RecordError;
use super::namespaces::Namespaces;

/// `PERF_RECORD_MMAP`: a mapping, without inode details. The session asks
/// for MMAP2 instead.
pub const PERF_RECORD_MMAP: u32 = 1;
/// `PERF_RECORD_LOST`: records dropped because the ring was full.
pub const PERF_RECORD_LOST: u32 = 2;
/// `PERF_RECORD_COMM`: a thread's name, set by exec or prctl.
pub const PERF_RECORD_COMM: u32 = 3;
/// `PERF_RECORD_EXIT`: a task exited.
pub const PERF_RECORD_EXIT: u32 = 4;
/// `PERF_RECORD_FORK`: a task was created (process or thread).
pub const PERF_RECORD_FORK: u32 = 7;
/// `PERF_RECORD_SAMPLE`: a tracepoint hit.
pub const PERF_RECORD_SAMPLE: u32 = 9;
/// `PERF_RECORD_MMAP2`: a mapping, with the file it maps.
pub const PERF_RECORD_MMAP2: u32 = 10;
/// `PERF_RECORD_NAMESPACES`: a task's namespaces changed.
pub const PERF_RECORD_NAMESPACES: u32 = 16;

/// `PERF_RECORD_MISC_USER`: the cpumode of a user-space record (a mapping).
pub const PERF_RECORD_MISC_USER: u16 = 2;

/// `PERF_RECORD_MISC_COMM_EXEC`: the COMM comes from an exec, not a rename.
pub const PERF_RECORD_MISC_COMM_EXEC: u16 = 1 << 13;

/// `struct perf_event_header`.
pub const HEADER_LEN: usize = 8;
/// `struct sample_id` for our sample_type: pid, tid, time, cpu, res, id.
const SAMPLE_ID_LEN: usize = 32;

/// Who wrote a record, when and where: the `sample_id` fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleId {
    /// The perf event id (`PERF_EVENT_IOC_ID`) that produced the record.
    pub id: u64,
    /// The process (thread group) id, in the recorder's PID namespace.
    pub pid: u32,
    /// The thread id, in the same namespace.
    pub tid: u32,
    /// CLOCK_MONOTONIC nanoseconds.
    pub time: u64,
    /// The CPU it ran on.
    pub cpu: u32,
}

/// A task appeared (FORK) or went away (EXIT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// The task's process id.
    pub pid: u32,
    /// The parent's process id.
    pub ppid: u32,
    /// The task's thread id.
    pub tid: u32,
    /// The parent's thread id.
    pub ptid: u32,
    /// When it happened, CLOCK_MONOTONIC nanoseconds.
    pub time: u64,
    /// Who wrote the record, when and where.
    pub sample: SampleId,
}

/// Callchain entries at or above this (`PERF_CONTEXT_MAX`, `(u64)-4095`)
/// are context markers (`PERF_CONTEXT_USER` and the like), not addresses.
pub const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;

/// The most entries a callchain may claim: perf's own bound
/// (`PERF_MAX_STACK_DEPTH` is 127; the sysctl allows more, never more
/// than a record of at most 64 KiB holds).
const MAX_CALLCHAIN: u64 = 0x10000 / 8;

/// A sample's callchain as the kernel wrote it: the addresses of each
/// frame, innermost first, among context markers. Empty for a sample of
/// an event recorded without its stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Callchain<'a> {
    /// The entries, u64 each, after the count.
    entries: &'a [u8],
}

impl<'a> Callchain<'a> {
    /// The callchain at the start of `bytes` (`u64 nr`, then `nr` u64
    /// entries), and the bytes after it; None when `bytes` holds fewer
    /// entries than its count says.
    pub fn parse(bytes: &'a [u8]) -> Option<(Callchain<'a>, &'a [u8])> {
        let count = u64::from_ne_bytes(bytes.get(..8)?.try_into().ok()?);
        if count > MAX_CALLCHAIN {
            return None;
        }
        let end = 8 + 8 * count as usize;
        Some((Callchain { entries: bytes.get(8..end)? }, &bytes[end..]))
    }

    /// The frames' addresses, innermost first, without context markers.
    pub fn addresses(&self) -> impl Iterator<Item = u64> + 'a {
        self.entries
            .chunks_exact(8)
            .map(|e| u64::from_ne_bytes(e.try_into().unwrap_or_default()))
            .filter(|&ip| ip < PERF_CONTEXT_MAX)
    }

    /// Whether it has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One parsed record, borrowing from the bytes it was parsed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// A tracepoint hit, with its raw `trace_entry` + payload.
    Sample {
        /// Who emitted it, when and where.
        sample: SampleId,
        /// The emitting thread's user stack, when its event records one.
        stack: Callchain<'a>,
        /// The bytes [`decode`](fn@crate::decode) reads.
        raw: &'a [u8],
    },
    /// A thread's name changed: by exec (`exec`) or by prctl/pthread_setname.
    Comm {
        /// The thread's process id.
        pid: u32,
        /// The thread's id.
        tid: u32,
        /// The new name, without its NUL.
        comm: &'a [u8],
        /// Whether an exec set it.
        exec: bool,
        /// Who wrote the record, when and where.
        sample: SampleId,
    },
    /// A task was created.
    Fork(Task),
    /// A task exited.
    Exit(Task),
    /// A mapping was made.
    Mmap2 {
        /// The mapping process.
        pid: u32,
        /// The mapping thread.
        tid: u32,
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
        /// Where in the file the mapping starts.
        pgoff: u64,
        /// `PROT_*` bits: only executable mappings hold code.
        prot: u32,
        /// The file mapped (or `[anon]`-style names), without its NUL.
        filename: &'a [u8],
        /// Who wrote the record, when and where.
        sample: SampleId,
    },
    /// The ring was full: `lost` records were dropped by the event `id`.
    Lost {
        /// The perf event id that dropped them.
        id: u64,
        /// How many were dropped.
        lost: u64,
        /// When the loss was reported, and on which CPU.
        sample: SampleId,
    },
    /// A task's namespaces, at fork, unshare or setns.
    Namespaces {
        /// The task's process id.
        pid: u32,
        /// The task's thread id.
        tid: u32,
        /// Its namespaces from now on.
        namespaces: Namespaces,
        /// Who wrote the record, when and where.
        sample: SampleId,
    },
    /// A type the session does not use (THROTTLE, ...).
    Other {
        /// The `PERF_RECORD_*` type.
        kind: u32,
        /// The header's `misc` bits.
        misc: u16,
    },
}

impl Record<'_> {
    /// The record's timestamp, when it has one.
    pub fn time(&self) -> Option<u64> {
        match self {
            Record::Sample { sample, .. }
            | Record::Comm { sample, .. }
            | Record::Mmap2 { sample, .. }
            | Record::Lost { sample, .. }
            | Record::Namespaces { sample, .. } => Some(sample.time),
            Record::Fork(t) | Record::Exit(t) => Some(t.sample.time),
            Record::Other { .. } => None,
        }
    }
}

/// A bounds-checked little reader over one record.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    kind: u32,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], RecordError> {
        let out = self.bytes.get(self.at..self.at + n).ok_or(RecordError::Truncated { kind: self.kind })?;
        self.at += n;
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32, RecordError> {
        Ok(u32::from_ne_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }
    fn u64(&mut self) -> Result<u64, RecordError> {
        Ok(u64::from_ne_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }
}

/// The records of a buffer that holds them back to back, as a round of
/// the rings does once copied out: each record's bytes, header included,
/// as its header's size says. The walk stops at a record that is cut
/// short or says it is smaller than a header (a ring gone wrong, or a
/// hostile one): nothing after it can be found, and [`BackToBack::rest`]
/// says what was left. The one walk over such buffers: the session, the
/// flight window and the archive writer all take it.
pub fn back_to_back(bytes: &[u8]) -> BackToBack<'_> {
    BackToBack { rest: bytes }
}

/// The iterator of [`back_to_back`].
#[derive(Debug, Clone)]
pub struct BackToBack<'a> {
    rest: &'a [u8],
}

impl<'a> BackToBack<'a> {
    /// What was not walked: empty once every record was given; otherwise
    /// from the record that could not be.
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

impl<'a> Iterator for BackToBack<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let size = usize::from(u16::from_ne_bytes(self.rest.get(6..8)?.try_into().ok()?));
        if size < HEADER_LEN || size > self.rest.len() {
            return None;
        }
        let (record, rest) = self.rest.split_at(size);
        self.rest = rest;
        Some(record)
    }
}

/// A record's `PERF_RECORD_*` type; 0 for fewer than four bytes.
pub fn kind(record: &[u8]) -> u32 {
    record.get(..4).and_then(|b| b.try_into().ok()).map_or(0, u32::from_ne_bytes)
}

/// Parses one whole record (header included), of an event recorded
/// without its stack.
pub fn parse(bytes: &[u8]) -> Result<Record<'_>, RecordError> {
    parse_with(bytes, |_| false)
}

/// Parses one whole record (header included); a sample of an event id for
/// which `has_stack` holds has a callchain before its raw data.
pub fn parse_with(bytes: &[u8], has_stack: impl Fn(u64) -> bool) -> Result<Record<'_>, RecordError> {
    if bytes.len() < HEADER_LEN {
        return Err(RecordError::NoHeader);
    }
    let kind = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let misc = u16::from_ne_bytes([bytes[4], bytes[5]]);
    let size = u16::from_ne_bytes([bytes[6], bytes[7]]) as usize;
    if size != bytes.len() {
        return Err(RecordError::SizeMismatch { header: size, actual: bytes.len() });
    }
    let truncated = RecordError::Truncated { kind };
    // Non-sample records end with the sample_id trailer; the body is before it.
    let trailer = || -> Result<(SampleId, &[u8]), RecordError> {
        let body_end = size.checked_sub(SAMPLE_ID_LEN).filter(|&e| e >= HEADER_LEN).ok_or(truncated)?;
        let mut c = Cursor { bytes, at: body_end, kind };
        let (pid, tid, time, cpu, _res, id) = (c.u32()?, c.u32()?, c.u64()?, c.u32()?, c.u32()?, c.u64()?);
        Ok((SampleId { id, pid, tid, time, cpu }, &bytes[HEADER_LEN..body_end]))
    };
    match kind {
        PERF_RECORD_SAMPLE => {
            let mut c = Cursor { bytes, at: HEADER_LEN, kind };
            let id = c.u64()?;
            let (pid, tid, time, cpu, _res) = (c.u32()?, c.u32()?, c.u64()?, c.u32()?, c.u32()?);
            let stack = if has_stack(id) {
                let (stack, rest) = Callchain::parse(&bytes[c.at..]).ok_or(truncated)?;
                c.at = bytes.len() - rest.len();
                stack
            } else {
                Callchain::default()
            };
            let raw_len = c.u32()? as usize;
            let raw = c.take(raw_len)?;
            Ok(Record::Sample { sample: SampleId { id, pid, tid, time, cpu }, stack, raw })
        }
        PERF_RECORD_COMM => {
            let (sample, body) = trailer()?;
            let mut c = Cursor { bytes: body, at: 0, kind };
            let (pid, tid) = (c.u32()?, c.u32()?);
            let comm = padded_string(&body[8..], kind)?;
            Ok(Record::Comm { pid, tid, comm, exec: misc & PERF_RECORD_MISC_COMM_EXEC != 0, sample })
        }
        PERF_RECORD_FORK | PERF_RECORD_EXIT => {
            let (sample, body) = trailer()?;
            let mut c = Cursor { bytes: body, at: 0, kind };
            let task = Task { pid: c.u32()?, ppid: c.u32()?, tid: c.u32()?, ptid: c.u32()?, time: c.u64()?, sample };
            Ok(if kind == PERF_RECORD_FORK { Record::Fork(task) } else { Record::Exit(task) })
        }
        PERF_RECORD_MMAP2 => {
            let (sample, body) = trailer()?;
            let mut c = Cursor { bytes: body, at: 0, kind };
            let (pid, tid, addr, len, pgoff) = (c.u32()?, c.u32()?, c.u64()?, c.u64()?, c.u64()?);
            // maj, min, ino, ino_generation (or build id).
            c.take(24)?;
            let (prot, _flags) = (c.u32()?, c.u32()?);
            let filename = padded_string(&body[c.at..], kind)?;
            Ok(Record::Mmap2 { pid, tid, addr, len, pgoff, prot, filename, sample })
        }
        PERF_RECORD_LOST => {
            let (sample, body) = trailer()?;
            let mut c = Cursor { bytes: body, at: 0, kind };
            Ok(Record::Lost { id: c.u64()?, lost: c.u64()?, sample })
        }
        PERF_RECORD_NAMESPACES => {
            let (sample, body) = trailer()?;
            let mut c = Cursor { bytes: body, at: 0, kind };
            let (pid, tid, count) = (c.u32()?, c.u32()?, c.u64()?);
            // (dev, ino) pairs; the count comes from the record, so bound it
            // by the bytes there before trusting it.
            if count > (body.len() / 16) as u64 {
                return Err(truncated);
            }
            let mut inodes = [0u64; 8];
            for i in 0..count as usize {
                let (_dev, ino) = (c.u64()?, c.u64()?);
                if let Some(slot) = inodes.get_mut(i) {
                    *slot = ino;
                }
            }
            Ok(Record::Namespaces { pid, tid, namespaces: Namespaces::from_inodes(inodes), sample })
        }
        _ => Ok(Record::Other { kind, misc }),
    }
}

/// The kernel writes names NUL-terminated and padded to 8 bytes; anything
/// else means the record was cut.
fn padded_string(bytes: &[u8], kind: u32) -> Result<&[u8], RecordError> {
    if bytes.is_empty() || bytes.len() % 8 != 0 || bytes[bytes.len() - 1] != 0 {
        return Err(RecordError::Truncated { kind });
    }
    Ok(&bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())])
}

/// Builders of records as the kernel writes them, for tests here and in
/// the other consumer modules.
#[cfg(test)]
pub(crate) mod build {
    use super::*;

    pub fn header(kind: u32, misc: u16, body: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&kind.to_ne_bytes());
        r.extend_from_slice(&misc.to_ne_bytes());
        r.extend_from_slice(&((HEADER_LEN + body.len()) as u16).to_ne_bytes());
        r.extend_from_slice(body);
        r
    }

    pub fn sample_id(s: SampleId) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [s.pid, s.tid] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(&s.time.to_ne_bytes());
        b.extend_from_slice(&s.cpu.to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        b.extend_from_slice(&s.id.to_ne_bytes());
        b
    }

    pub fn sample(s: SampleId, raw: &[u8]) -> Vec<u8> {
        sample_with_stack(s, None, raw)
    }

    /// A sample whose event records its stack: `stack` is the callchain's
    /// entries, markers included.
    pub fn sample_with_stack(s: SampleId, stack: Option<&[u64]>, raw: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&s.id.to_ne_bytes());
        b.extend_from_slice(&s.pid.to_ne_bytes());
        b.extend_from_slice(&s.tid.to_ne_bytes());
        b.extend_from_slice(&s.time.to_ne_bytes());
        b.extend_from_slice(&s.cpu.to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        if let Some(stack) = stack {
            b.extend_from_slice(&(stack.len() as u64).to_ne_bytes());
            for ip in stack {
                b.extend_from_slice(&ip.to_ne_bytes());
            }
        }
        // The kernel pads raw so that size + data end 8-aligned.
        let padded = (4 + raw.len()).next_multiple_of(8) - 4;
        b.extend_from_slice(&(padded as u32).to_ne_bytes());
        b.extend_from_slice(raw);
        b.resize(b.len() + padded - raw.len(), 0);
        header(PERF_RECORD_SAMPLE, 0, &b)
    }

    pub fn comm(pid: u32, tid: u32, name: &str, exec: bool, s: SampleId) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        let mut n = name.as_bytes().to_vec();
        n.resize((name.len() + 1).next_multiple_of(8), 0);
        b.extend_from_slice(&n);
        b.extend_from_slice(&sample_id(s));
        header(PERF_RECORD_COMM, if exec { PERF_RECORD_MISC_COMM_EXEC } else { 0 }, &b)
    }

    pub fn task(kind: u32, pid: u32, ppid: u32, tid: u32, ptid: u32, s: SampleId) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [pid, ppid, tid, ptid] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(&s.time.to_ne_bytes());
        b.extend_from_slice(&sample_id(s));
        header(kind, 0, &b)
    }

    pub fn lost(id: u64, lost: u64, s: SampleId) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&id.to_ne_bytes());
        b.extend_from_slice(&lost.to_ne_bytes());
        b.extend_from_slice(&sample_id(s));
        header(PERF_RECORD_LOST, 0, &b)
    }

    pub fn namespaces(pid: u32, tid: u32, inodes: &[u64], s: SampleId) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        b.extend_from_slice(&(inodes.len() as u64).to_ne_bytes());
        for &ino in inodes {
            b.extend_from_slice(&4u64.to_ne_bytes()); // nsfs dev
            b.extend_from_slice(&ino.to_ne_bytes());
        }
        b.extend_from_slice(&sample_id(s));
        header(PERF_RECORD_NAMESPACES, 0, &b)
    }

    pub fn mmap2(pid: u32, tid: u32, file: &str, s: SampleId) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        for v in [0x1000u64, 0x2000, 0] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(&[0u8; 32]);
        let mut n = file.as_bytes().to_vec();
        n.resize((file.len() + 1).next_multiple_of(8), 0);
        b.extend_from_slice(&n);
        b.extend_from_slice(&sample_id(s));
        header(PERF_RECORD_MMAP2, 0, &b)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn back_to_back_gives_each_whole_record_and_stops_at_a_cut_one() {
        let a = build::header(PERF_RECORD_COMM, 0, &[1; 16]);
        let b = build::header(PERF_RECORD_EXIT, 0, &[2; 8]);
        let mut bytes = [a.clone(), b.clone()].concat();
        let walked: Vec<&[u8]> = back_to_back(&bytes).collect();
        assert_eq!(walked, [&a[..], &b[..]]);
        assert_eq!(walked.iter().map(|r| kind(r)).collect::<Vec<_>>(), [PERF_RECORD_COMM, PERF_RECORD_EXIT]);
        // Cut short: the last record says more bytes than there are.
        bytes.truncate(bytes.len() - 1);
        let mut walk = back_to_back(&bytes);
        assert_eq!(walk.by_ref().count(), 1);
        assert_eq!(walk.rest().len(), b.len() - 1);
        // A size below a header's would never move on: it stops there.
        let mut zero = a.clone();
        zero.extend_from_slice(&[0; 8]);
        let mut walk = back_to_back(&zero);
        assert_eq!(walk.by_ref().count(), 1);
        assert_eq!(walk.rest(), [0; 8]);
        assert_eq!(back_to_back(&[]).count(), 0);
        assert_eq!(kind(&[1, 2]), 0);
    }

    use super::build::*;
    use super::*;

    const S: SampleId = SampleId { id: 42, pid: 10, tid: 11, time: 1_000, cpu: 1 };

    #[test]
    fn every_record_type_parses_to_its_fields() {
        let raw = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        match parse(&sample(S, &raw)).unwrap() {
            Record::Sample { sample, raw: got, .. } => {
                assert_eq!(sample, S);
                assert_eq!(&got[..raw.len()], &raw);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse(&comm(10, 11, "renamed", true, S)).unwrap(),
            Record::Comm { pid: 10, tid: 11, comm: b"renamed", exec: true, sample: S }
        );
        assert_eq!(
            parse(&task(PERF_RECORD_FORK, 12, 10, 13, 11, S)).unwrap(),
            Record::Fork(Task { pid: 12, ppid: 10, tid: 13, ptid: 11, time: 1_000, sample: S })
        );
        assert!(matches!(parse(&task(PERF_RECORD_EXIT, 12, 10, 13, 11, S)).unwrap(), Record::Exit(t) if t.tid == 13));
        assert_eq!(parse(&lost(42, 7, S)).unwrap(), Record::Lost { id: 42, lost: 7, sample: S });
        assert!(matches!(
            parse(&mmap2(10, 11, "/bin/true", S)).unwrap(),
            Record::Mmap2 { filename: b"/bin/true", addr: 0x1000, .. }
        ));
        let ns = Namespaces { net: 1, uts: 2, ipc: 3, pid: 4, user: 5, mnt: 6, cgroup: 7 };
        assert_eq!(
            parse(&namespaces(10, 11, &[1, 2, 3, 4, 5, 6, 7], S)).unwrap(),
            Record::Namespaces { pid: 10, tid: 11, namespaces: ns, sample: S }
        );
        assert_eq!(parse(&header(5, 0, &[0; 16])).unwrap(), Record::Other { kind: 5, misc: 0 });
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let records = [
            sample(S, b"0123456789"),
            comm(1, 2, "x", false, S),
            task(PERF_RECORD_FORK, 1, 2, 3, 4, S),
            lost(1, 2, S),
            mmap2(1, 2, "/f", S),
            namespaces(1, 2, &[1, 2, 3, 4, 5, 6, 7], S),
        ];
        for r in &records {
            for len in 0..r.len() {
                let mut cut = r[..len].to_vec();
                if len >= HEADER_LEN {
                    // Keep the header consistent so the body parser is what fails.
                    cut[6..8].copy_from_slice(&(len as u16).to_ne_bytes());
                }
                assert!(parse(&cut).is_err(), "type {} cut to {len} parsed", r[0]);
            }
        }
        assert_eq!(parse(&[0; 4]), Err(RecordError::NoHeader));
        // A namespace count larger than the record holds.
        let mut r = namespaces(1, 2, &[1, 2], S);
        r[16..24].copy_from_slice(&u64::MAX.to_ne_bytes());
        assert_eq!(parse(&r), Err(RecordError::Truncated { kind: PERF_RECORD_NAMESPACES }));
        // A callchain whose count says more entries than the record holds,
        // or more than any kernel writes.
        for count in [3u64, 1 << 40, u64::MAX] {
            let mut r = sample_with_stack(S, Some(&[1, 2]), b"raw");
            r[HEADER_LEN + 32..HEADER_LEN + 40].copy_from_slice(&count.to_ne_bytes());
            assert_eq!(parse_with(&r, |_| true), Err(RecordError::Truncated { kind: PERF_RECORD_SAMPLE }), "count {count}");
        }
        let mut r = lost(1, 2, S);
        r[6] = 200;
        assert!(matches!(parse(&r), Err(RecordError::SizeMismatch { header: 200, .. })));
    }

    #[test]
    fn a_sample_with_a_stack_has_its_addresses_innermost_first_without_markers() {
        let user = -512i64 as u64; // PERF_CONTEXT_USER
        let record = sample_with_stack(S, Some(&[user, 0x401000, 0x402000, 0x7f00_0000_1000]), b"0123456789");
        let Record::Sample { sample: who, stack, raw } = parse_with(&record, |id| id == S.id).unwrap() else { panic!("not a sample") };
        assert_eq!(who, S);
        assert_eq!(stack.addresses().collect::<Vec<_>>(), [0x401000, 0x402000, 0x7f00_0000_1000]);
        assert_eq!(&raw[..10], b"0123456789");
        // Another event's samples have no stack: the same bytes are read as
        // raw data, not taken for a callchain.
        let plain = sample(S, b"0123456789");
        let Record::Sample { stack, raw, .. } = parse_with(&plain, |id| id != S.id).unwrap() else { panic!("not a sample") };
        assert!(stack.is_empty());
        assert_eq!(&raw[..10], b"0123456789");
    }

    #[test]
    fn a_sample_with_a_stack_cut_anywhere_is_an_error_not_a_panic() {
        let r = sample_with_stack(S, Some(&[-512i64 as u64, 1, 2, 3]), b"0123456789");
        for len in HEADER_LEN..r.len() {
            let mut cut = r[..len].to_vec();
            cut[6..8].copy_from_slice(&(len as u16).to_ne_bytes());
            assert!(parse_with(&cut, |_| true).is_err(), "cut to {len} parsed");
        }
    }

    #[test]
    fn a_mapping_says_where_in_its_file_it_starts_and_whether_it_holds_code() {
        let bytes = mmap2(10, 11, "/bin/true", S);
        let Record::Mmap2 { addr, len, pgoff, prot, filename, .. } = parse(&bytes).unwrap() else { panic!() };
        assert_eq!((addr, len, pgoff, prot, filename), (0x1000, 0x2000, 0, 0, &b"/bin/true"[..]));
    }
}

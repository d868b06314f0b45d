//! The shared-memory transport's files, byte by byte: what a producer
//! writes and a recorder reads where the kernel has no user_events.
//!
//! Both halves build on these definitions (the producer in this crate, the
//! recorder in `usertrace-consumer`), so the two cannot drift apart. The
//! readers here take plain byte slices: a recorder copies out of the shared
//! mapping first and checks the copy, because every byte a producer wrote
//! is hostile input (see [`RegistryHeader::parse`], [`Slot::parse`],
//! [`RecordHeader::parse`]).
//!
//! # Files
//! Every file lives in [`directory`]: `/dev/shm/usertrace-UID`, mode 0700,
//! owned by the producer's user. Files in it are mode 0600.
//! - `PID.INSTANCE.registry`: one per program image (see
//!   [`registry_file_name`]), [`REGISTRY_LEN`] bytes: a [`RegistryHeader`],
//!   then [`SLOTS`] slots of [`SLOT_LEN`] bytes, one per registered
//!   tracepoint.
//! - `PID.INSTANCE.TID.ring`: one per thread that emitted while enabled: a
//!   [`RingHeader`] page, then the data area, a power of two of bytes.
//! - `RECORDER.wake`: a recorder's wake socket (see below).
//!
//! # The enable word
//! It stays where it always was, in the producer (a `static`, or a C
//! struct), so a disabled check is still one load of that word. A slot
//! gives its address; the recorder writes it with `process_vm_writev`,
//! which the kernel allows only to a caller with ptrace rights over the
//! producer (what `perf record -p` needs). A write to a freed word would
//! corrupt the producer, so slot states make it impossible:
//! - the recorder moves a slot LIVE → BUSY (compare-and-swap), writes the
//!   word, then BUSY → LIVE;
//! - the producer unregisters by LIVE → FREE; while BUSY it waits (the
//!   write takes microseconds). If the recorder named in the header has
//!   died, no write is in flight and the producer takes the slot back. If a
//!   live recorder holds it past [`UNREGISTER_WAIT_MS`], unregistration
//!   fails and the word is leaked, never freed: as when the kernel refuses
//!   to unregister.
//!
//! # Rings
//! One producer thread writes, one recorder reads. A record is a
//! [`RecordHeader`] and the payload exactly as the `writev` path would have
//! written it after the write index; records are 8-byte aligned and may
//! wrap around the end of the data area (the reader copies in two pieces,
//! as perf's ring readers do). `head` is the producer's, stored with
//! Release after the record's bytes; `tail` is the recorder's, stored with
//! Release after it copied them. A record that does not fit is dropped and
//! counted in `lost`. The producer allocates and maps every page of a
//! ring when it makes it (`MADV_POPULATE_WRITE`, or `fallocate` and a
//! write per page before Linux 5.14), before it writes the data length:
//! no emit pays a page's first touch, and a ring's memory (the data area
//! and a page) is taken whole when its thread first emits.

//!
//! # Time stamps
//! A record's `time_ns` is CLOCK_MONOTONIC nanoseconds, the clock of the
//! kernel's records, or, in a ring whose header says [`ring::CLOCK_TSC`],
//! the raw TSC ([`tsc_now`], some 3 times cheaper than `clock_gettime`).
//! A producer takes the TSC only where CLOCK_MONOTONIC is itself the TSC
//! scaled (x86-64, the kernel's clocksource `tsc`, the CPU's TSC
//! `constant_tsc` and `nonstop_tsc`), and never when
//! `USERTRACE_SHM_CLOCK=monotonic`. The recorder converts ticks to
//! CLOCK_MONOTONIC by a line through two (TSC, CLOCK_MONOTONIC) readings of
//! its own, the first at its start and the last taken just before each read
//! of the rings: each pair read between two TSC reads, the closest of
//! several kept. The error of a converted time is the reading's window (tens
//! of nanoseconds) plus the drift of the kernel's own TSC-to-monotonic
//! scale (NTP slews it by parts per million) over the time since the last
//! reading (a round, milliseconds): well under a microsecond, which keeps
//! the one time order with the kernel's records (fork, exec, exit, comm)
//! as far as anything that runs between an event and such a record takes.
//!
//! # Waking the recorder
//! A recorder that finds a ring empty reads it again only after a while
//! (tens of milliseconds), so a burst into an idle recorder could fill the
//! ring first. So a producer wakes the recorder that holds it when one of
//! its rings passes the watermark, a quarter full ([`WAKE_WATERMARK`]; as
//! LTTng's producers wake its consumer at each of 4 sub-buffers filled,
//! and leaving the recorder the time of three quarters of the ring to be
//! scheduled and read):
//! - The recorder binds a Unix datagram socket, `RECORDER.wake` (its pid;
//!   see [`wake_socket_file_name`]), in its own user's [`directory`], and
//!   polls it beside its perf descriptors. Run as root, it links the same
//!   socket into each other user's directory where it holds a producer
//!   (a hard link: the socket file's mode, 0666, is set in root's own
//!   0700 directory, never through a path another user controls; the link
//!   is reachable only through that user's 0700 directory). It removes
//!   them when it ends; one a recorder left by crashing is found dead (a
//!   datagram to it is refused) and removed by the next recorder.
//! - The producer sends one byte to `RECORDER.wake` in its own directory,
//!   naming the recorder its registry's [`registry::RECORDER`] holds, on
//!   the emit that takes a ring's unread bytes from below the watermark to
//!   it or past it: once per crossing, not per event. The send never
//!   waits (`MSG_DONTWAIT`, `MSG_NOSIGNAL`) and each of its failures is
//!   ignored: no socket (an older recorder, or none), a full one, a
//!   recorder gone. It opens a socket for the send and closes it after:
//!   nothing is cached that a fork, an exec or a program closing every
//!   descriptor could leave pointing elsewhere. A lost wakeup costs only
//!   the recorder's poll, as before.
//! - The recorder empties the socket at each wakeup, and honours it at
//!   most once per [`MIN_WAKE_INTERVAL_MS`]: a producer that sends without
//!   end makes it read its rings no more often than a busy one does.
//! - One recorder per producer (the registry's holder), so several
//!   recorders never wake each other; a recorder that restarts has a new
//!   pid, which the producer reads anew at each crossing.
//!
//! The socket is a new kind of file in the directory: readers of older
//! versions skip names they do not know, and the registry and ring files
//! did not change, so [`VERSION`] stays 1 on both sides.
//!
//! # Handing over `user_events_data`
//! A producer whose transport is `user_events` by setting, in a place
//! with no `user_events_data` to open (a pod with no tracefs), keeps its
//! registrations pending and listens on a Unix stream socket,
//! `PID.INSTANCE.handoff` ([`handoff_socket_file_name`]), in its own
//! [`directory`]. A recorder run as root on the node connects to it (by
//! descriptor, beneath the directory, never following a symlink), checks
//! with `SO_PEERCRED` that the process listening is the one the name
//! says, and sends one message: [`HANDOFF_MESSAGE`] with a descriptor of
//! the node's `user_events_data` (`SCM_RIGHTS`). The producer checks that
//! the descriptor is one ([`TRACEFS_MAGIC`], opened for reading and
//! writing, named `user_events_data`), registers every pending tracepoint
//! with it, removes the socket and listens no more.

/// The fraction of a ring's data area, as a divisor, whose crossing wakes
/// the recorder: 4, a quarter full.
pub const WAKE_WATERMARK: u64 = 4;

/// The TSC now (`rdtsc`): the clock of a ring whose header says
/// [`ring::CLOCK_TSC`]. 0 where there is none (not x86-64), where no ring
/// takes it.
#[inline]
pub fn tsc_now() -> u64 {
    crate::sys::tsc()
}

/// Whether an emit of `record_len` bytes into a ring of `data_len` bytes
/// that held `unread` bytes (head less tail, before it) takes the ring
/// across the watermark: from below it to at or above it. Written records
/// only; a dropped one never crosses.
#[inline]
pub const fn crosses_watermark(unread: u64, record_len: u64, data_len: u64) -> bool {
    let mark = data_len / WAKE_WATERMARK;
    unread < mark && unread + record_len >= mark
}

/// The fewest milliseconds between two wakeups a recorder honours.
pub const MIN_WAKE_INTERVAL_MS: u64 = 1;

/// The recorder's wake socket's name inside [`directory`]: `RECORDER.wake`.
pub fn wake_socket_file_name(recorder: u32) -> String {
    format!("{recorder}{WAKE_SUFFIX}")
}

/// The recorder's pid in a wake socket's name.
pub fn parse_wake_socket_file_name(name: &str) -> Option<u32> {
    name.strip_suffix(WAKE_SUFFIX)?.parse().ok()
}

/// How wake socket names end.
pub const WAKE_SUFFIX: &str = ".wake";

/// A producer's handoff socket's name inside [`directory`]:
/// `PID.INSTANCE.handoff`, the pid as the producer's own PID namespace
/// numbers it (see "Handing over `user_events_data`" above).
pub fn handoff_socket_file_name(pid: u32, instance: u32) -> String {
    format!("{pid}.{instance}{HANDOFF_SUFFIX}")
}

/// The pid and instance in a handoff socket's name, `PID.INSTANCE.handoff`.
pub fn parse_handoff_socket_file_name(name: &str) -> Option<(u32, u32)> {
    let (pid, instance) = name.strip_suffix(HANDOFF_SUFFIX)?.split_once('.')?;
    Some((pid.parse().ok()?, instance.parse().ok()?))
}

/// How handoff socket names end.
pub const HANDOFF_SUFFIX: &str = ".handoff";

/// The bytes a recorder sends with the descriptor: a producer takes a
/// descriptor only from a message that is exactly these.
pub const HANDOFF_MESSAGE: &[u8; 20] = b"usertrace-handoff 1\n";

/// `statfs(2)`'s `f_type` of tracefs, where `user_events_data` lives.
pub const TRACEFS_MAGIC: i64 = 0x7472_6163;

/// The directory of every shared-memory file of user `uid`.
pub fn directory(uid: u32) -> std::path::PathBuf {
    format!("{DIRECTORY_PREFIX}{uid}").into()
}

/// Every user's directory starts with this; a recorder run as root looks
/// at all of them.
pub const DIRECTORY_PREFIX: &str = "/dev/shm/usertrace-";

/// The registry file of process `pid`'s registry `instance`, inside
/// [`directory`]. An instance is one program image's registry: an exec
/// (same pid, new image) or a fork child makes a new one, so a recorder
/// still reading the old image's rings never mistakes the new one's files
/// for them.
pub fn registry_file_name(pid: u32, instance: u32) -> String {
    format!("{pid}.{instance}{REGISTRY_SUFFIX}")
}

/// The ring file of thread `tid` of process `pid`'s registry `instance`,
/// inside [`directory`].
pub fn ring_file_name(pid: u32, instance: u32, tid: u32) -> String {
    format!("{pid}.{instance}.{tid}{RING_SUFFIX}")
}

/// Whether a registry that says PID namespace `theirs` comes from another
/// namespace than `ours` (each an inode of `/proc/self/ns/pid`, 0 where
/// unknown). Its pid then names another process, or none, here: it is
/// neither recorded nor judged gone by that pid, and its files are not
/// removed. Unknown on either side counts as the same, as before the
/// header said.
pub fn in_another_pid_namespace(theirs: u64, ours: u64) -> bool {
    theirs != 0 && ours != 0 && theirs != ours
}

/// This process's PID namespace, as a registry's [`registry::PID_NAMESPACE`]
/// says it: the inode of `/proc/self/ns/pid`, 0 if it cannot be read.
/// Allocates nothing.
pub fn own_pid_namespace() -> u64 {
    crate::sys::inode_of(c"/proc/self/ns/pid").unwrap_or(0)
}

/// The pid and instance in a registry file's name, `PID.INSTANCE.registry`.
pub fn parse_registry_file_name(name: &str) -> Option<(u32, u32)> {
    let (pid, instance) = name.strip_suffix(REGISTRY_SUFFIX)?.split_once('.')?;
    Some((pid.parse().ok()?, instance.parse().ok()?))
}

/// The pid, instance and tid in a ring file's name, `PID.INSTANCE.TID.ring`.
pub fn parse_ring_file_name(name: &str) -> Option<(u32, u32, u32)> {
    let mut parts = name.strip_suffix(RING_SUFFIX)?.split('.');
    let ids = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
    parts.next().is_none().then_some(ids)
}

/// How registry file names end.
pub const REGISTRY_SUFFIX: &str = ".registry";
/// How ring file names end.
pub const RING_SUFFIX: &str = ".ring";

/// The first 8 bytes of a registry file.
pub const REGISTRY_MAGIC: [u8; 8] = *b"UTREG\0\0\x01";
/// The first 8 bytes of a ring file: layout version 2, whose header says
/// which clock its records' times are on ([`ring::CLOCK`]).
pub const RING_MAGIC: [u8; 8] = *b"UTRING\0\x02";
/// The first 8 bytes of a ring of version 1, which had no clock field:
/// its times are all CLOCK_MONOTONIC. A reader still accepts it; a reader
/// of version 1 refuses version 2 rather than misread TSC ticks as times.
pub const RING_MAGIC_V1: [u8; 8] = *b"UTRING\0\x01";
/// The newest layout version a magic ends in (the registry's is still 1,
/// the ring's 2); a reader refuses any it does not know.
pub const VERSION: u32 = 2;

/// Bytes before the first slot.
pub const REGISTRY_HEADER_LEN: usize = 64;
/// Tracepoints one process can register through shared memory.
pub const SLOTS: usize = 1024;
/// Bytes per slot.
pub const SLOT_LEN: usize = 1024;
/// The registry file's length. Untouched slots cost no memory in tmpfs.
pub const REGISTRY_LEN: usize = REGISTRY_HEADER_LEN + SLOTS * SLOT_LEN;

/// Offsets in the registry header.
pub mod registry {
    /// `[u8; 8]`: [`super::REGISTRY_MAGIC`].
    pub const MAGIC: usize = 0;
    /// `u32`: the producer's pid.
    pub const PID: usize = 8;
    /// `u32`: [`super::SLOTS`], as the producer laid it out.
    pub const SLOT_COUNT: usize = 12;
    /// `u64`: the producer's start time, in clock ticks after boot, as
    /// field 22 of `/proc/PID/stat` gives it: with the pid, it tells the
    /// process from a later one that reused the pid.
    pub const START_TIME: usize = 16;
    /// `u32` (atomic): the pid of the recorder that holds this producer,
    /// or 0. A recorder takes it by compare-and-swap from 0 (or from a
    /// recorder that no longer exists), and gives it back when it ends.
    pub const RECORDER: usize = 24;
    /// `u32` (atomic): bumped by the producer after each slot change, so
    /// that a recorder rereads the slots only when something changed.
    pub const GENERATION: usize = 28;
    /// `u32`: the instance its file name carries.
    pub const INSTANCE: usize = 32;
    /// `u64`: the inode of the producer's PID namespace (`/proc/self/ns/pid`),
    /// in which [`PID`] is its pid; 0 if it could not tell. A recorder in
    /// another PID namespace would find another process, or none, under
    /// that pid: it does not record this producer, and says why.
    pub const PID_NAMESPACE: usize = 40;
}

/// Offsets in a slot.
pub mod slot {
    /// `u32` (atomic): one of the `STATE_*` values.
    pub const STATE: usize = 0;
    /// `u32`: the length of the descriptor.
    pub const DESCRIPTOR_LEN: usize = 4;
    /// `u64`: the enable word's address in the producer.
    pub const ENABLE_ADDRESS: usize = 8;
    /// The descriptor: the format string the producer would have given
    /// the kernel (`name u32 a;__rel_loc char[] b`), not NUL-terminated.
    pub const DESCRIPTOR: usize = 32;
    /// Unused: the producer is filling it in, or has freed it.
    pub const STATE_FREE: u32 = 0;
    /// Registered: the recorder may write the enable word.
    pub const STATE_LIVE: u32 = 1;
    /// The recorder is writing the enable word; nobody may free it.
    pub const STATE_BUSY: u32 = 2;
}

/// Longest descriptor a slot holds: more than the kernel's 511-byte limit
/// on the same string.
pub const MAX_DESCRIPTOR_LEN: usize = SLOT_LEN - slot::DESCRIPTOR;

/// How long an unregistration waits for a live recorder to finish writing
/// an enable word before it gives up and leaks the word.
pub const UNREGISTER_WAIT_MS: u64 = 1000;

/// Bytes of the ring header: one page, so that the producer's `head` and
/// the recorder's `tail` each have a cache line of their own and the data
/// starts page-aligned.
pub const RING_HEADER_LEN: usize = 4096;

/// Offsets in the ring header.
pub mod ring {
    /// `[u8; 8]`: [`super::RING_MAGIC`].
    pub const MAGIC: usize = 0;
    /// `u32`: the producer's pid.
    pub const PID: usize = 8;
    /// `u32`: the writing thread's id.
    pub const TID: usize = 12;
    /// `u64`: bytes in the data area, a power of two.
    pub const DATA_LEN: usize = 16;
    /// `u32` (atomic): set by the thread as it exits; the recorder drains
    /// what is left and removes the file.
    pub const CLOSED: usize = 24;
    /// `u32` (version 2): the clock of its records' `time_ns`, one of
    /// `CLOCK_*`; written before the data length.
    pub const CLOCK: usize = 28;
    /// `clock_gettime(CLOCK_MONOTONIC)` nanoseconds.
    pub const CLOCK_MONOTONIC: u32 = 0;
    /// Raw TSC ticks (`rdtsc`), which the recorder converts.
    pub const CLOCK_TSC: u32 = 1;
    /// `u64` (atomic): bytes ever written; the producer's.
    pub const HEAD: usize = 64;
    /// `u64` (atomic): bytes ever read; the recorder's.
    pub const TAIL: usize = 128;
    /// `u64` (atomic): records dropped because the ring was full.
    pub const LOST: usize = 192;
}

/// The data area of a new ring: 256 KiB, as a perf ring of 64 pages.
pub const DEFAULT_RING_DATA_LEN: usize = 256 << 10;
/// The smallest and largest data area a reader accepts.
pub const MIN_RING_DATA_LEN: usize = 4096;
/// See [`MIN_RING_DATA_LEN`].
pub const MAX_RING_DATA_LEN: usize = 64 << 20;

/// Bytes of a record's header.
pub const RECORD_HEADER_LEN: usize = 24;
/// Records start at multiples of this.
pub const RECORD_ALIGN: usize = 8;

/// A record's header in a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Bytes of the whole record, header and padding included: a multiple
    /// of [`RECORD_ALIGN`].
    pub len: u32,
    /// The registry slot of the tracepoint.
    pub slot: u32,
    /// When the event was written: CLOCK_MONOTONIC nanoseconds, or raw
    /// TSC ticks in a ring whose clock is [`ring::CLOCK_TSC`] (see
    /// "Time stamps" in the module doc).
    pub time_ns: u64,
    /// The CPU it was written on.
    pub cpu: u32,
    /// Bytes of payload after the header (the rest is padding).
    pub payload_len: u32,
}

impl RecordHeader {
    /// The header as it is laid out in the ring.
    pub fn to_bytes(self) -> [u8; RECORD_HEADER_LEN] {
        let mut out = [0u8; RECORD_HEADER_LEN];
        out[0..4].copy_from_slice(&self.len.to_ne_bytes());
        out[4..8].copy_from_slice(&self.slot.to_ne_bytes());
        out[8..16].copy_from_slice(&self.time_ns.to_ne_bytes());
        out[16..20].copy_from_slice(&self.cpu.to_ne_bytes());
        out[20..24].copy_from_slice(&self.payload_len.to_ne_bytes());
        out
    }

    /// The header at the start of `bytes`, checked: its length is aligned,
    /// holds the header and the payload, and is at most `available`.
    pub fn parse(bytes: &[u8], available: usize) -> Result<RecordHeader, LayoutError> {
        if bytes.len() < RECORD_HEADER_LEN {
            return Err(LayoutError::Truncated { what: "record header", need: RECORD_HEADER_LEN, have: bytes.len() });
        }
        let header = RecordHeader {
            len: u32_at(bytes, 0),
            slot: u32_at(bytes, 4),
            time_ns: u64_at(bytes, 8),
            cpu: u32_at(bytes, 16),
            payload_len: u32_at(bytes, 20),
        };
        let len = header.len as usize;
        if len < RECORD_HEADER_LEN || len % RECORD_ALIGN != 0 || len > available {
            return Err(LayoutError::BadRecordLength { len, available });
        }
        if header.payload_len as usize > len - RECORD_HEADER_LEN {
            return Err(LayoutError::BadPayloadLength { payload: header.payload_len as usize, record: len });
        }
        if header.slot as usize >= SLOTS {
            return Err(LayoutError::BadSlot { slot: header.slot as usize });
        }
        Ok(header)
    }

    /// The record length for `payload_len` bytes of payload.
    pub const fn len_for(payload_len: usize) -> usize {
        (RECORD_HEADER_LEN + payload_len + RECORD_ALIGN - 1) & !(RECORD_ALIGN - 1)
    }
}

/// The records in bytes copied from a ring, each checked; a malformed
/// one ends the walk (nothing after it can be framed) with its error.
pub fn records(bytes: &[u8]) -> Records<'_> {
    Records { bytes, at: 0, failed: false }
}

/// The iterator of [`records`]: each record's header and payload.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
    failed: bool,
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<(RecordHeader, &'a [u8]), LayoutError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.bytes.len() {
            return None;
        }
        let rest = &self.bytes[self.at..];
        match RecordHeader::parse(rest, rest.len()) {
            Ok(header) => {
                let payload = &rest[RECORD_HEADER_LEN..RECORD_HEADER_LEN + header.payload_len as usize];
                self.at += header.len as usize;
                Some(Ok((header, payload)))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// A registry header, as read from a copy of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistryHeader {
    /// The producer's pid.
    pub pid: u32,
    /// Its start time in clock ticks (see [`registry::START_TIME`]).
    pub start_time: u64,
    /// The recorder holding it, or 0.
    pub recorder: u32,
    /// The slot generation (see [`registry::GENERATION`]).
    pub generation: u32,
    /// The instance (see [`registry_file_name`]).
    pub instance: u32,
    /// Its PID namespace's inode, or 0 (see [`registry::PID_NAMESPACE`]).
    pub pid_namespace: u64,
}

impl RegistryHeader {
    /// Checks the magic and the slot count of a copy of the header.
    pub fn parse(bytes: &[u8]) -> Result<RegistryHeader, LayoutError> {
        if bytes.len() < REGISTRY_HEADER_LEN {
            return Err(LayoutError::Truncated { what: "registry header", need: REGISTRY_HEADER_LEN, have: bytes.len() });
        }
        if bytes[registry::MAGIC..registry::MAGIC + 8] != REGISTRY_MAGIC {
            return Err(LayoutError::BadMagic { what: "registry" });
        }
        let slots = u32_at(bytes, registry::SLOT_COUNT) as usize;
        if slots != SLOTS {
            return Err(LayoutError::BadSlotCount { slots });
        }
        Ok(RegistryHeader {
            pid: u32_at(bytes, registry::PID),
            start_time: u64_at(bytes, registry::START_TIME),
            recorder: u32_at(bytes, registry::RECORDER),
            generation: u32_at(bytes, registry::GENERATION),
            instance: u32_at(bytes, registry::INSTANCE),
            pid_namespace: u64_at(bytes, registry::PID_NAMESPACE),
        })
    }
}

/// A live slot, as read from a copy of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// Where the enable word is in the producer.
    pub enable_address: u64,
    /// The format string, checked to be UTF-8 (its grammar is checked by
    /// whoever parses it).
    pub descriptor: String,
}

impl Slot {
    /// The slot in a copy of its [`SLOT_LEN`] bytes, or `None` if it is not
    /// live. The address must be 4-byte aligned and nonzero.
    pub fn parse(bytes: &[u8]) -> Result<Option<Slot>, LayoutError> {
        if bytes.len() < SLOT_LEN {
            return Err(LayoutError::Truncated { what: "slot", need: SLOT_LEN, have: bytes.len() });
        }
        if u32_at(bytes, slot::STATE) != slot::STATE_LIVE {
            return Ok(None);
        }
        let len = u32_at(bytes, slot::DESCRIPTOR_LEN) as usize;
        if len == 0 || len > MAX_DESCRIPTOR_LEN {
            return Err(LayoutError::BadDescriptorLength { len });
        }
        let enable_address = u64_at(bytes, slot::ENABLE_ADDRESS);
        if enable_address == 0 || enable_address % 4 != 0 {
            return Err(LayoutError::BadEnableAddress { address: enable_address });
        }
        let descriptor = std::str::from_utf8(&bytes[slot::DESCRIPTOR..slot::DESCRIPTOR + len])
            .map_err(|_| LayoutError::DescriptorNotUtf8)?
            .to_owned();
        Ok(Some(Slot { enable_address, descriptor }))
    }
}

/// Which clock a ring's record times are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingClock {
    /// CLOCK_MONOTONIC nanoseconds, as the kernel's records.
    Monotonic,
    /// Raw TSC ticks, converted by the recorder.
    Tsc,
}

/// A ring header, as read from a copy of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingHeader {
    /// The producer's pid.
    pub pid: u32,
    /// The writing thread.
    pub tid: u32,
    /// Bytes of data area.
    pub data_len: usize,
    /// The clock of its records' times.
    pub clock: RingClock,
}

impl RingHeader {
    /// Checks the magic and the data length (a power of two within
    /// [`MIN_RING_DATA_LEN`]..=[`MAX_RING_DATA_LEN`], and no more than
    /// `file_len` leaves room for).
    pub fn parse(bytes: &[u8], file_len: u64) -> Result<RingHeader, LayoutError> {
        if bytes.len() < ring::LOST + 8 {
            return Err(LayoutError::Truncated { what: "ring header", need: ring::LOST + 8, have: bytes.len() });
        }
        let magic = &bytes[ring::MAGIC..ring::MAGIC + 8];
        let clock = if magic == RING_MAGIC_V1 {
            RingClock::Monotonic
        } else if magic == RING_MAGIC {
            match u32_at(bytes, ring::CLOCK) {
                ring::CLOCK_MONOTONIC => RingClock::Monotonic,
                ring::CLOCK_TSC => RingClock::Tsc,
                clock => return Err(LayoutError::BadClock { clock }),
            }
        } else {
            return Err(LayoutError::BadMagic { what: "ring" });
        };
        let data_len = u64_at(bytes, ring::DATA_LEN);
        let fits = file_len >= RING_HEADER_LEN as u64 && data_len <= file_len - RING_HEADER_LEN as u64;
        if !data_len.is_power_of_two() || data_len < MIN_RING_DATA_LEN as u64 || data_len > MAX_RING_DATA_LEN as u64 || !fits {
            return Err(LayoutError::BadRingLength { data_len, file_len });
        }
        Ok(RingHeader { pid: u32_at(bytes, ring::PID), tid: u32_at(bytes, ring::TID), data_len: data_len as usize, clock })
    }
}

/// What was wrong with a shared-memory file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// Fewer bytes than the structure needs.
    Truncated {
        /// The structure.
        what: &'static str,
        /// Bytes it needs.
        need: usize,
        /// Bytes there were.
        have: usize,
    },
    /// Not one of our files, or another layout version.
    BadMagic {
        /// Which kind of file.
        what: &'static str,
    },
    /// A registry laid out for another number of slots.
    BadSlotCount {
        /// The count it gave.
        slots: usize,
    },
    /// A descriptor length of 0 or past the slot.
    BadDescriptorLength {
        /// The length it gave.
        len: usize,
    },
    /// A descriptor that is not UTF-8.
    DescriptorNotUtf8,
    /// An enable-word address that is 0 or not 4-byte aligned.
    BadEnableAddress {
        /// The address it gave.
        address: u64,
    },
    /// A ring data length that is no power of two in range, or past the file.
    BadRingLength {
        /// The length it gave.
        data_len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A record length that is unaligned, shorter than its header, or
    /// longer than the bytes published.
    BadRecordLength {
        /// The length it gave.
        len: usize,
        /// Bytes published after its start.
        available: usize,
    },
    /// A payload longer than its record.
    BadPayloadLength {
        /// The payload length it gave.
        payload: usize,
        /// The record length.
        record: usize,
    },
    /// A record naming a slot past the registry.
    BadSlot {
        /// The slot it named.
        slot: usize,
    },
    /// A ring header naming a clock this reader does not know.
    BadClock {
        /// The value it gave.
        clock: u32,
    },
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::Truncated { what, need, have } => write!(f, "a {what} needs {need} bytes, and {have} were there"),
            LayoutError::BadMagic { what } => write!(f, "not a usertrace {what} file of layout version {VERSION}"),
            LayoutError::BadSlotCount { slots } => write!(f, "the registry has {slots} slots, not {SLOTS}"),
            LayoutError::BadDescriptorLength { len } => {
                write!(f, "a slot's descriptor is {len} bytes long, outside 1..={MAX_DESCRIPTOR_LEN}")
            }
            LayoutError::DescriptorNotUtf8 => write!(f, "a slot's descriptor is not UTF-8"),
            LayoutError::BadEnableAddress { address } => write!(f, "a slot's enable word address {address:#x} is 0 or unaligned"),
            LayoutError::BadRingLength { data_len, file_len } => write!(
                f,
                "a ring's data length {data_len} is no power of two in {MIN_RING_DATA_LEN}..={MAX_RING_DATA_LEN}, or past its {file_len}-byte file"
            ),
            LayoutError::BadRecordLength { len, available } => write!(
                f,
                "a record's length {len} is unaligned, shorter than its header, or past the {available} bytes published"
            ),
            LayoutError::BadPayloadLength { payload, record } => write!(f, "a record's {payload}-byte payload is longer than its {record}-byte record"),
            LayoutError::BadSlot { slot } => write!(f, "a record names slot {slot}, past the registry's {SLOTS}"),
            LayoutError::BadClock { clock } => write!(f, "a ring names clock {clock}, neither monotonic (0) nor TSC (1)"),
        }
    }
}

impl std::error::Error for LayoutError {}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_read_back_into_their_ids() {
        assert_eq!(parse_registry_file_name(&registry_file_name(12, 34)), Some((12, 34)));
        assert_eq!(parse_ring_file_name(&ring_file_name(12, 34, 56)), Some((12, 34, 56)));
        assert_eq!(parse_ring_file_name("12.34.ring"), None);
        assert_eq!(parse_ring_file_name("1.2.3.4.ring"), None);
        assert_eq!(parse_registry_file_name("12.registry"), None);
        assert_eq!(parse_registry_file_name("x.1.registry"), None);
    }

    #[test]
    fn a_handoff_socket_name_reads_back_and_no_other_name_passes_for_one() {
        assert_eq!(handoff_socket_file_name(1, 4_294_967_295), "1.4294967295.handoff");
        assert_eq!(parse_handoff_socket_file_name(&handoff_socket_file_name(1, u32::MAX)), Some((1, u32::MAX)));
        for other in ["1.handoff", "1.2.3.handoff", "x.2.handoff", "1.2.handoff.tmp", "1.2.registry", "..handoff", "1.2.HANDOFF"] {
            assert_eq!(parse_handoff_socket_file_name(other), None, "{other}");
        }
        assert_eq!(parse_registry_file_name(&handoff_socket_file_name(1, 2)), None, "not a registry either");
    }

    #[test]
    fn a_record_header_reads_back_what_was_written() {
        let header = RecordHeader { len: 40, slot: 3, time_ns: 123_456, cpu: 1, payload_len: 12 };
        assert_eq!(RecordHeader::parse(&header.to_bytes(), 40), Ok(header));
        assert_eq!(RecordHeader::len_for(12), 40);
        assert_eq!(RecordHeader::len_for(0), 24);
    }

    #[test]
    fn a_record_longer_than_what_was_published_is_refused() {
        let header = RecordHeader { len: 48, slot: 0, time_ns: 0, cpu: 0, payload_len: 4 };
        assert_eq!(RecordHeader::parse(&header.to_bytes(), 40), Err(LayoutError::BadRecordLength { len: 48, available: 40 }));
        let unaligned = RecordHeader { len: 27, ..header };
        assert!(RecordHeader::parse(&unaligned.to_bytes(), 64).is_err());
        let overlong_payload = RecordHeader { len: 32, payload_len: 9, ..header };
        assert_eq!(
            RecordHeader::parse(&overlong_payload.to_bytes(), 64),
            Err(LayoutError::BadPayloadLength { payload: 9, record: 32 })
        );
        let past_slots = RecordHeader { slot: SLOTS as u32, ..header };
        assert_eq!(RecordHeader::parse(&past_slots.to_bytes(), 64), Err(LayoutError::BadSlot { slot: SLOTS }));
    }

    fn record(slot: u32, time_ns: u64, payload: &[u8]) -> Vec<u8> {
        let len = RecordHeader::len_for(payload.len());
        let mut out = RecordHeader { len: len as u32, slot, time_ns, cpu: 1, payload_len: payload.len() as u32 }.to_bytes().to_vec();
        out.extend_from_slice(payload);
        out.resize(len, 0);
        out
    }

    #[test]
    fn records_walks_back_to_back_records_with_their_payloads() {
        let mut bytes = record(2, 10, &[7, 0, 0, 0]);
        bytes.extend(record(3, 11, b"hello"));
        let walked: Vec<_> = records(&bytes).map(|r| r.map(|(h, p)| (h.slot, h.time_ns, p.to_vec()))).collect();
        assert_eq!(walked, vec![Ok((2, 10, vec![7, 0, 0, 0])), Ok((3, 11, b"hello".to_vec()))]);
    }

    #[test]
    fn a_record_claiming_more_than_was_copied_ends_the_walk_with_an_error() {
        let mut bytes = record(2, 10, &[1, 2, 3, 4]);
        let mut bad = record(2, 11, &[1]);
        bad[0..4].copy_from_slice(&4096u32.to_ne_bytes());
        bytes.extend(bad);
        bytes.extend(record(2, 12, &[9]));
        let walked: Vec<_> = records(&bytes).collect();
        assert_eq!(walked.len(), 2);
        assert!(walked[0].is_ok());
        assert!(matches!(walked[1], Err(LayoutError::BadRecordLength { len: 4096, .. })));
    }

    #[test]
    fn a_slot_is_read_only_when_live_and_well_formed() {
        let mut bytes = vec![0u8; SLOT_LEN];
        assert_eq!(Slot::parse(&bytes), Ok(None));
        bytes[slot::STATE..slot::STATE + 4].copy_from_slice(&slot::STATE_LIVE.to_ne_bytes());
        bytes[slot::DESCRIPTOR_LEN..slot::DESCRIPTOR_LEN + 4].copy_from_slice(&5u32.to_ne_bytes());
        bytes[slot::ENABLE_ADDRESS..slot::ENABLE_ADDRESS + 8].copy_from_slice(&0x1000u64.to_ne_bytes());
        bytes[slot::DESCRIPTOR..slot::DESCRIPTOR + 5].copy_from_slice(b"ev u8");
        assert_eq!(Slot::parse(&bytes), Ok(Some(Slot { enable_address: 0x1000, descriptor: "ev u8".into() })));
        bytes[slot::ENABLE_ADDRESS..slot::ENABLE_ADDRESS + 8].copy_from_slice(&0x1002u64.to_ne_bytes());
        assert_eq!(Slot::parse(&bytes), Err(LayoutError::BadEnableAddress { address: 0x1002 }));
        bytes[slot::DESCRIPTOR_LEN..slot::DESCRIPTOR_LEN + 4].copy_from_slice(&(MAX_DESCRIPTOR_LEN as u32 + 1).to_ne_bytes());
        assert!(matches!(Slot::parse(&bytes), Err(LayoutError::BadDescriptorLength { .. })));
    }

    #[test]
    fn a_ring_header_must_fit_its_file() {
        let mut bytes = vec![0u8; RING_HEADER_LEN];
        bytes[..8].copy_from_slice(&RING_MAGIC);
        bytes[ring::DATA_LEN..ring::DATA_LEN + 8].copy_from_slice(&(8192u64).to_ne_bytes());
        assert_eq!(RingHeader::parse(&bytes, (RING_HEADER_LEN + 8192) as u64).map(|h| h.clock), Ok(RingClock::Monotonic));
        bytes[ring::CLOCK..ring::CLOCK + 4].copy_from_slice(&ring::CLOCK_TSC.to_ne_bytes());
        assert_eq!(RingHeader::parse(&bytes, (RING_HEADER_LEN + 8192) as u64).map(|h| h.clock), Ok(RingClock::Tsc));
        bytes[ring::CLOCK..ring::CLOCK + 4].copy_from_slice(&7u32.to_ne_bytes());
        assert_eq!(RingHeader::parse(&bytes, (RING_HEADER_LEN + 8192) as u64), Err(LayoutError::BadClock { clock: 7 }));
        // Version 1 had no clock field: monotonic, whatever the bytes there.
        bytes[..8].copy_from_slice(&RING_MAGIC_V1);
        assert_eq!(RingHeader::parse(&bytes, (RING_HEADER_LEN + 8192) as u64).map(|h| h.clock), Ok(RingClock::Monotonic));
        bytes[..8].copy_from_slice(&RING_MAGIC);
        bytes[ring::CLOCK..ring::CLOCK + 4].copy_from_slice(&0u32.to_ne_bytes());
        assert!(RingHeader::parse(&bytes, (RING_HEADER_LEN + 4096) as u64).is_err());
        bytes[ring::DATA_LEN..ring::DATA_LEN + 8].copy_from_slice(&(8000u64).to_ne_bytes());
        assert!(RingHeader::parse(&bytes, 1 << 20).is_err());
        bytes[..8].copy_from_slice(b"garbage!");
        assert_eq!(RingHeader::parse(&bytes, 1 << 20), Err(LayoutError::BadMagic { what: "ring" }));
    }
}

//! What the shared-memory tests share: running a test in a child process
//! with its own environment (the transport is read once per process), and
//! reading this process's files back through `shm_layout`'s parsers, as a
//! recorder would. Writes that simulate the recorder go through the file
//! (`pwrite`), which tmpfs shares with every mapping of it.
#![allow(dead_code)]

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use usertrace::shm_layout::{
    self, registry, ring, RecordHeader, RegistryHeader, RingHeader, Slot, REGISTRY_HEADER_LEN, RING_HEADER_LEN, SLOTS, SLOT_LEN,
};

const CHILD_ENV: &str = "USERTRACE_TEST_CHILD";

/// In the parent: reruns test `name` alone in a child process with `env`,
/// checks that it passed, and returns false. In that child: returns true,
/// and the test goes on.
pub fn in_child(name: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        return true;
    }
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args([name, "--exact", "--nocapture", "--test-threads=1"]).env(CHILD_ENV, name);
    command.env_remove("USERTRACE_TRANSPORT").env_remove("USERTRACE_SHM_RING_KIB");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "test {name} failed in its child process:\n{text}");
    assert!(text.contains("1 passed"), "test {name} did not run in its child:\n{text}");
    false
}

pub fn euid() -> u32 {
    // SAFETY: geteuid(2) has no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

pub fn dir() -> PathBuf {
    shm_layout::directory(euid())
}

/// The registry file of `pid` (its one instance), or a path that does not
/// exist if it has none.
pub fn registry_path(pid: u32) -> PathBuf {
    let found = std::fs::read_dir(dir()).into_iter().flatten().flatten().map(|e| e.path()).find(|p| {
        p.file_name().and_then(|n| n.to_str()).and_then(shm_layout::parse_registry_file_name).is_some_and(|(p, _)| p == pid)
    });
    found.unwrap_or_else(|| dir().join(format!("{pid}.none{}", shm_layout::REGISTRY_SUFFIX)))
}

/// The enable word at `word`, as the recorder would set it.
pub fn set_word(word: *const u32, value: u32) {
    // SAFETY: `word` is a registered tracepoint's enable word, alive and
    // 4-byte aligned, and only accessed atomically.
    unsafe { AtomicU32::from_ptr(word.cast_mut()) }.store(value, Ordering::Relaxed);
}

/// A copy of the registry of `pid`, as a recorder reads it.
pub struct RegistryCopy {
    pub header: RegistryHeader,
    pub bytes: Vec<u8>,
}

impl RegistryCopy {
    pub fn read(pid: u32) -> RegistryCopy {
        let bytes = std::fs::read(registry_path(pid)).unwrap();
        RegistryCopy { header: RegistryHeader::parse(&bytes).unwrap(), bytes }
    }

    pub fn slot_bytes(&self, index: usize) -> &[u8] {
        let at = REGISTRY_HEADER_LEN + index * SLOT_LEN;
        &self.bytes[at..at + SLOT_LEN]
    }

    /// Every live slot, by index.
    pub fn live(&self) -> Vec<(usize, Slot)> {
        (0..SLOTS).filter_map(|i| Slot::parse(self.slot_bytes(i)).unwrap().map(|s| (i, s))).collect()
    }

    pub fn state(&self, index: usize) -> u32 {
        u32::from_ne_bytes(self.slot_bytes(index)[..4].try_into().unwrap())
    }
}

/// Writes a registry word of process `pid` as the recorder would.
pub fn write_registry_u32(pid: u32, offset: usize, value: u32) {
    let file = File::options().write(true).open(registry_path(pid)).unwrap();
    file.write_all_at(&value.to_ne_bytes(), offset as u64).unwrap();
}

pub fn set_recorder(pid: u32, recorder: u32) {
    write_registry_u32(pid, registry::RECORDER, recorder);
}

pub fn set_slot_state(pid: u32, index: usize, state: u32) {
    write_registry_u32(pid, REGISTRY_HEADER_LEN + index * SLOT_LEN + shm_layout::slot::STATE, state);
}

/// The ring files of process `pid`.
pub fn ring_paths(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("{pid}.");
    let mut paths: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(&prefix) && name.ends_with(shm_layout::RING_SUFFIX)
        })
        .collect();
    paths.sort();
    paths
}

/// A ring, read through the file as a recorder would read its mapping.
pub struct RingReader {
    pub file: File,
    pub header: RingHeader,
}

pub struct Record {
    pub header: RecordHeader,
    pub payload: Vec<u8>,
}

impl RingReader {
    pub fn open(path: &std::path::Path) -> RingReader {
        let file = File::options().read(true).write(true).open(path).unwrap();
        let mut bytes = vec![0u8; RING_HEADER_LEN];
        file.read_exact_at(&mut bytes, 0).unwrap();
        let header = RingHeader::parse(&bytes, file.metadata().unwrap().len()).unwrap();
        RingReader { file, header }
    }

    pub fn word(&self, offset: usize) -> u64 {
        let mut bytes = [0u8; 8];
        self.file.read_exact_at(&mut bytes, offset as u64).unwrap();
        u64::from_ne_bytes(bytes)
    }

    pub fn closed(&self) -> bool {
        self.word(ring::CLOSED) as u32 != 0
    }

    pub fn lost(&self) -> u64 {
        self.word(ring::LOST)
    }

    /// Every record published and not yet read; then `tail` moves past them.
    pub fn drain(&self) -> Vec<Record> {
        let (head, mut tail) = (self.word(ring::HEAD), self.word(ring::TAIL));
        let mut records = Vec::new();
        while tail < head {
            let bytes = self.read_wrapped(tail, (head - tail) as usize);
            let header = RecordHeader::parse(&bytes, bytes.len()).unwrap();
            let start = shm_layout::RECORD_HEADER_LEN;
            records.push(Record { header, payload: bytes[start..start + header.payload_len as usize].to_vec() });
            tail += u64::from(header.len);
        }
        self.file.write_all_at(&tail.to_ne_bytes(), ring::TAIL as u64).unwrap();
        records
    }

    /// `len` bytes from ring position `at`, in two pieces across the end.
    fn read_wrapped(&self, at: u64, len: usize) -> Vec<u8> {
        let data_len = self.header.data_len;
        let offset = (at as usize) & (data_len - 1);
        let first = len.min(data_len - offset);
        let mut out = vec![0u8; len];
        self.file.read_exact_at(&mut out[..first], (RING_HEADER_LEN + offset) as u64).unwrap();
        self.file.read_exact_at(&mut out[first..], RING_HEADER_LEN as u64).unwrap();
        out
    }
}

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The payload `u32 a; str b` (a `__rel_loc` string) as the kernel lays it
/// out after the write index.
pub fn payload_u32_str(a: u32, b: &str) -> Vec<u8> {
    let mut want = a.to_ne_bytes().to_vec();
    // The string's data starts right after the loc word (offset 0 from its
    // end), and its length counts the NUL.
    let loc = (b.len() as u32 + 1) << 16;
    want.extend_from_slice(&loc.to_ne_bytes());
    want.extend_from_slice(b.as_bytes());
    want.push(0);
    want
}

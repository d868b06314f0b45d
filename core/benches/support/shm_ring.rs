//! A thread's shared-memory ring, mapped by a benchmark as a recorder maps
//! it, to play the recorder: move its tail, read its loss count. Included
//! by `shm_emit.rs` and `shm_first_touch.rs` with `#[path]`.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

/// This thread's ring, mapped as a recorder maps it, to move its tail.
pub struct ThisThreadsRing {
    base: *mut u8,
    len: usize,
}

impl ThisThreadsRing {
    /// The ring file `PID.INSTANCE.TID.ring` of the calling thread, made
    /// by its first emit.
    pub fn open() -> ThisThreadsRing {
        // SAFETY: geteuid has no preconditions.
        let dir = format!("/dev/shm/usertrace-{}", unsafe { libc::geteuid() });
        let pid = std::process::id();
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let path = std::fs::read_dir(&dir)
            .expect("the shared-memory directory")
            .map(|e| e.unwrap().path())
            .find(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with(&format!("{pid}.")) && name.ends_with(&format!(".{tid}.ring"))
            })
            .expect("this thread's ring");
        let file = OpenOptions::new().read(true).write(true).open(&path).expect("the ring file");
        let len = file.metadata().unwrap().len() as usize;
        // SAFETY: maps the whole file shared, as the recorder does; the
        // mapping outlives every use (the bench's end).
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        assert_ne!(base, libc::MAP_FAILED);
        ThisThreadsRing { base: base.cast(), len }
    }

    /// A header word: `head`, `tail` or `lost`.
    fn word(&self, offset: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(offset + 8 <= self.len);
        // SAFETY: the header's aligned u64 words, inside the mapping; the
        // producer writes `head` and `lost`, the recorder (this) `tail`,
        // all atomically.
        unsafe { &*self.base.add(offset).cast::<std::sync::atomic::AtomicU64>() }
    }

    /// Frees all that was written: tail = head.
    pub fn take_all(&self) {
        use usertrace::shm_layout::ring::{HEAD, TAIL};
        self.word(TAIL).store(self.word(HEAD).load(Ordering::Acquire), Ordering::Release);
    }

    /// Bytes ever written (the producer's `head`).
    pub fn head(&self) -> u64 {
        self.word(usertrace::shm_layout::ring::HEAD).load(Ordering::Acquire)
    }

    /// Records dropped because the ring was full.
    pub fn lost(&self) -> u64 {
        self.word(usertrace::shm_layout::ring::LOST).load(Ordering::Relaxed)
    }
}

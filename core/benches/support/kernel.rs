//! What the benchmarks that need user_events share: a perf event attached
//! to a tracepoint on every CPU, and an event registered and written by
//! hand, without usertrace (the baseline a C programmer would write).
//! Included by `producer.rs` and `shm_emit.rs` with `#[path]`.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

use usertrace::__private::abi::{UserReg, DIAG_IOCSREG};

/// A perf event on `event` for every CPU, each with a ring that is drained
/// by simply moving the tail, so the kernel does its full work per event.
pub struct PerfAttached {
    rings: Vec<(OwnedFd, *mut libc::c_void, usize)>,
}

impl PerfAttached {
    pub fn open(event: &str) -> Self {
        use perf_event_open_sys::bindings::{perf_event_attr, PERF_FLAG_FD_CLOEXEC, PERF_SAMPLE_RAW, PERF_SAMPLE_TIME, PERF_TYPE_TRACEPOINT};
        let tracefs = usertrace::status().tracefs.unwrap();
        let id: u64 = std::fs::read_to_string(tracefs.join("events/user_events").join(event).join("id")).unwrap().trim().parse().unwrap();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let page = 4096usize;
        let len = page * (1 + 64);
        let rings = (0..cpus)
            .map(|cpu| {
                let mut attr = perf_event_attr { type_: PERF_TYPE_TRACEPOINT, config: id, ..Default::default() };
                attr.size = std::mem::size_of::<perf_event_attr>() as u32;
                attr.sample_period = 1;
                attr.sample_type = (PERF_SAMPLE_RAW | PERF_SAMPLE_TIME) as u64;
                // SAFETY: attr is a valid perf_event_attr.
                let fd = unsafe { perf_event_open_sys::perf_event_open(&mut attr, -1, cpu as i32, -1, PERF_FLAG_FD_CLOEXEC as _) };
                assert!(fd >= 0, "perf_event_open: {}", std::io::Error::last_os_error());
                // SAFETY: fd is a new perf event descriptor we own.
                let fd = unsafe { OwnedFd::from_raw_fd(fd) };
                // SAFETY: maps the event's ring as perf(2) documents: 1 + 2^n pages.
                let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
                assert_ne!(base, libc::MAP_FAILED);
                (fd, base, len)
            })
            .collect();
        PerfAttached { rings }
    }

    pub fn drain(&self) {
        for &(_, base, _) in &self.rings {
            let page = base.cast::<perf_event_open_sys::bindings::perf_event_mmap_page>();
            // SAFETY: `page` is the mapped control page; the kernel writes
            // data_head, we write data_tail, both through atomics.
            unsafe {
                let head = (*(std::ptr::addr_of!((*page).data_head) as *const std::sync::atomic::AtomicU64)).load(Ordering::Acquire);
                (*(std::ptr::addr_of_mut!((*page).data_tail) as *const std::sync::atomic::AtomicU64)).store(head, Ordering::Release);
            }
        }
    }
}

impl Drop for PerfAttached {
    fn drop(&mut self) {
        for &(_, base, len) in &self.rings {
            // SAFETY: unmapping what `open` mapped.
            unsafe { libc::munmap(base, len) };
        }
    }
}

/// An event registered and written by hand, without usertrace: a
/// descriptor of its own, a bare `DIAG_IOCSREG`, and one `writev` of the
/// write index and the payload. What a C programmer would write.
pub struct RawEvent {
    fd: OwnedFd,
    index: u32,
    enable_word: &'static AtomicU32,
}

impl RawEvent {
    /// Registers `name_args` (`NAME TYPE FIELD;...`), which makes the
    /// event if it did not exist: attach perf to it before writing.
    pub fn register(name_args: &str) -> RawEvent {
        let tracefs = usertrace::status().tracefs.unwrap();
        let path = CString::new(tracefs.join("user_events_data").to_str().unwrap()).unwrap();
        // SAFETY: open(2) on a NUL-terminated path.
        let fd = unsafe { OwnedFd::from_raw_fd(libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC)) };
        // Leaked: the kernel may write the enable bit for as long as the
        // registration lives, which is the rest of the process.
        let enable_word: &'static AtomicU32 = Box::leak(Box::new(AtomicU32::new(0)));
        let name_args = CString::new(name_args).unwrap();
        let mut reg = UserReg {
            size: std::mem::size_of::<UserReg>() as u32,
            enable_bit: 0,
            enable_size: 4,
            flags: 0,
            enable_addr: enable_word.as_ptr() as u64,
            name_args: name_args.as_ptr() as u64,
            write_index: 0,
        };
        // SAFETY: a valid user_reg whose enable word lives forever.
        assert_eq!(unsafe { libc::ioctl(fd.as_raw_fd(), DIAG_IOCSREG as _, &mut reg) }, 0, "{}", std::io::Error::last_os_error());
        RawEvent { fd, index: reg.write_index, enable_word }
    }

    pub fn enabled(&self) -> bool {
        self.enable_word.load(Ordering::Relaxed) != 0
    }

    pub fn write(&self, payload: &[u8]) {
        let iov = [
            libc::iovec { iov_base: &self.index as *const u32 as *mut _, iov_len: 4 },
            libc::iovec { iov_base: payload.as_ptr() as *mut _, iov_len: payload.len() },
        ];
        // SAFETY: both iovecs point at live memory of the lengths given.
        let n = unsafe { libc::writev(self.fd.as_raw_fd(), iov.as_ptr(), 2) };
        assert_eq!(n as usize, 4 + payload.len());
    }
}

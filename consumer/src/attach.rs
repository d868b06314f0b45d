//! Attaching to a tracepoint on every CPU without losing its first events.
//!
//! The kernel sets a user_event's enable bit when the *first* perf event on
//! it is created, but a write reaches perf only on a CPU whose event is
//! already installed. Opening CPU after CPU leaves a window in which a
//! producer sees its bit, writes on a CPU not yet covered, and the write
//! succeeds into nothing (`perf record` lost 1.2 s this way in the guest).
//!
//! Closing the window: the opening thread pins itself to the first CPU and
//! opens that CPU's event first (it is live there from the moment the bit
//! flips); meanwhile one SCHED_FIFO thread per other CPU spins, so no
//! ordinary task (no producer) can run on those CPUs until their events are
//! installed too. The installs reach the held CPUs by IPI. Every event is
//! opened enabled, already redirected into its CPU's ring.
//!
//! Limits, reported as [`Window::Open`]: without CAP_SYS_NICE (or an
//! RLIMIT_RTPRIO of 99) the hold is impossible and the window is the time of
//! a few perf_event_open calls; producers that are themselves SCHED_FIFO 99
//! are not held; and if the kernel sleeps inside the first open after the
//! bit flips, a producer may run on the first CPU before its event is live.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::Error;
use super::format::EventFormat;
use super::sys;
use usertrace::Errno;

/// Whether the attach window was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Other CPUs were held while the events were installed.
    Held,
    /// The hold was impossible (errno of the refusal); events were opened
    /// back to back, and ones written meanwhile on other CPUs may be lost.
    Open(Errno),
}

/// One tracepoint's perf events, one per CPU.
#[derive(Debug)]
pub struct Attachment {
    pub format: Arc<EventFormat>,
    /// (cpu, fd, perf id).
    pub events: Vec<(u32, OwnedFd, u64)>,
    pub window: Window,
}

/// Opens `format`'s tracepoint on each `(cpu, ring owner)` of `rings`,
/// with each sample's user stack when `stack` holds.
pub fn attach(format: Arc<EventFormat>, rings: &[(u32, BorrowedFd<'_>)], stack: bool) -> Result<Attachment, Error> {
    let Some(&(first_cpu, _)) = rings.first() else {
        return Ok(Attachment { format, events: Vec::new(), window: Window::Held });
    };
    let saved = sys::current_affinity().ok();
    let hold = sys::pin_current_thread(first_cpu).and_then(|()| Hold::engage(rings[1..].iter().map(|r| r.0)));
    let window = match &hold {
        Ok(_) => Window::Held,
        Err(errno) => Window::Open(*errno),
    };
    let opened = open_all(&format, rings, stack);
    drop(hold);
    if let Some(set) = saved {
        let _ = sys::set_affinity(&set);
    }
    Ok(Attachment { format, events: opened?, window })
}

fn open_all(format: &EventFormat, rings: &[(u32, BorrowedFd<'_>)], stack: bool) -> Result<Vec<(u32, OwnedFd, u64)>, Error> {
    let mut events = Vec::with_capacity(rings.len());
    for &(cpu, ring) in rings {
        let mut attr = sys::tracepoint_attr(format.id, stack);
        let fd = match sys::open(&mut attr, cpu, Some(ring)) {
            Ok(fd) => fd,
            // Kernels that refuse PERF_FLAG_FD_OUTPUT: redirect right after.
            Err(Errno(libc::EINVAL)) => {
                let fd = sys::open(&mut sys::tracepoint_attr(format.id, stack), cpu, None).map_err(|e| perf_error("perf_event_open(tracepoint)", cpu, e))?;
                sys::set_output(fd.as_fd(), ring).map_err(|e| perf_error("PERF_EVENT_IOC_SET_OUTPUT", cpu, e))?;
                fd
            }
            Err(e) => return Err(perf_error("perf_event_open(tracepoint)", cpu, e)),
        };
        let id = sys::event_id(fd.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ID", cpu, e))?;
        events.push((cpu, fd, id));
    }
    Ok(events)
}

/// Opens `format`'s tracepoint on each `(cpu, ring owner)` of `rings`,
/// disabled, with the ftrace `filter` set: for a kernel tracepoint (no
/// user_event enable bit flips here, so it may exist disabled), to be
/// enabled in place of another.
pub(crate) fn open_filtered(format: &EventFormat, rings: &[(u32, BorrowedFd<'_>)], filter: &std::ffi::CStr) -> Result<Vec<(u32, OwnedFd, u64)>, Error> {
    let mut events = Vec::with_capacity(rings.len());
    for &(cpu, ring) in rings {
        let mut attr = sys::tracepoint_attr(format.id, false);
        attr.set_disabled(1);
        let fd = sys::open(&mut attr, cpu, None).map_err(|e| perf_error("perf_event_open(tracepoint)", cpu, e))?;
        sys::set_output(fd.as_fd(), ring).map_err(|e| perf_error("PERF_EVENT_IOC_SET_OUTPUT", cpu, e))?;
        sys::set_filter(fd.as_fd(), filter).map_err(|e| perf_error("PERF_EVENT_IOC_SET_FILTER", cpu, e))?;
        let id = sys::event_id(fd.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ID", cpu, e))?;
        events.push((cpu, fd, id));
    }
    Ok(events)
}

pub(crate) fn perf_error(op: &'static str, cpu: u32, errno: Errno) -> Error {
    match errno.0 {
        libc::EACCES | libc::EPERM => Error::PermissionDenied { op, errno },
        _ => Error::Perf { op, cpu, errno },
    }
}

/// Real-time spinners occupying CPUs; released on drop.
struct Hold {
    release: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

/// Longest a spinner holds its CPU, should the opener stall: the kernel's
/// RT throttling would cut in at 950 ms anyway.
const MAX_HOLD: Duration = Duration::from_millis(500);

impl Hold {
    fn engage(cpus: impl Iterator<Item = u32>) -> Result<Hold, Errno> {
        let release = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(AtomicUsize::new(0));
        let mut hold = Hold { release: release.clone(), threads: Vec::new() };
        for cpu in cpus {
            let (release, ready, failed) = (release.clone(), ready.clone(), failed.clone());
            let spawned = std::thread::Builder::new().name(format!("usertrace-hold{cpu}")).spawn(move || {
                let setup = sys::pin_current_thread(cpu).and_then(|()| sys::set_fifo(99));
                match setup {
                    // Running on `cpu` at top RT priority: nothing else runs there.
                    Ok(()) if sys::current_cpu() == Some(cpu) => {
                        // ATOMICS: Release publishes that this CPU is held;
                        // pairs with the opener's Acquire load of `ready`.
                        ready.fetch_add(1, Ordering::Release);
                    }
                    Ok(()) => {
                        failed.store(libc::EAGAIN as usize, Ordering::Release);
                        return;
                    }
                    Err(e) => {
                        // ATOMICS: Release/Acquire only carry the errno value.
                        failed.store(e.0 as usize, Ordering::Release);
                        return;
                    }
                }
                let start = Instant::now();
                // ATOMICS: Relaxed is enough to see the flag eventually; no
                // data is handed over with it.
                while !release.load(Ordering::Relaxed) && start.elapsed() < MAX_HOLD {
                    std::hint::spin_loop();
                }
            });
            match spawned {
                Ok(t) => hold.threads.push(t),
                Err(_) => return Err(Errno(libc::EAGAIN)),
            }
        }
        let want = hold.threads.len();
        let start = Instant::now();
        // ATOMICS: Acquire pairs with the spinners' Release increments.
        while ready.load(Ordering::Acquire) < want {
            let err = failed.load(Ordering::Acquire);
            if err != 0 {
                return Err(Errno(err as i32));
            }
            if start.elapsed() > MAX_HOLD / 2 {
                return Err(Errno(libc::ETIMEDOUT));
            }
            std::thread::yield_now();
        }
        Ok(hold)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        // ATOMICS: Relaxed; see the spinners' load.
        self.release.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

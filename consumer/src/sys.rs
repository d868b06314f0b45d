//! The consumer's system calls: perf_event_open, its ioctls, affinity and
//! scheduling for the attach hold, and the monotonic clock.
//!
//! Each wrapper is a thin typed shell returning the raw errno.
//! References: perf_event_open(2), include/uapi/linux/perf_event.h.
//!
//! # Safety
//! Each wrapper passes the kernel pointers to live, initialised values of
//! the size it is given, and takes ownership only of the descriptors the
//! kernel just returned.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use perf_event_open_sys as pe;
use pe::bindings::perf_event_attr;

use usertrace::Errno;

fn last_errno() -> Errno {
    Errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
}

/// What every record of a session carries: its event id first (samples) or
/// last (everything else), then pid/tid, time and cpu. See `record.rs`.
pub const SAMPLE_TYPE: u64 = (pe::bindings::PERF_SAMPLE_IDENTIFIER
    | pe::bindings::PERF_SAMPLE_TID
    | pe::bindings::PERF_SAMPLE_TIME
    | pe::bindings::PERF_SAMPLE_CPU) as u64;

/// The attr size of Linux 6.3+ (VER8); larger kernels accept it, and older
/// ones accept a larger struct as long as the extra bytes are zero.
const ATTR_SIZE: u32 = pe::bindings::PERF_ATTR_SIZE_VER8;

fn base_attr() -> perf_event_attr {
    let mut attr = perf_event_attr { size: ATTR_SIZE, sample_type: SAMPLE_TYPE, ..Default::default() };
    attr.set_sample_id_all(1);
    attr.set_use_clockid(1);
    attr.clockid = libc::CLOCK_MONOTONIC;
    attr
}

/// The deepest user stack a sample carries: perf's own default
/// (`kernel.perf_event_max_stack` is 127), deep enough for any program
/// whose frames are worth reading, and a bound on each sample's size.
pub const MAX_STACK: u16 = 127;

/// A tracepoint event: every hit is a sample with the raw record; with
/// `stack`, also the emitting thread's user stack, walked by its frame
/// pointers (`PERF_SAMPLE_CALLCHAIN`, kernel frames excluded: they are the
/// same write path for every event), which sits before the raw record
/// (see `record.rs`). Opened enabled: see `attach.rs` for why it must
/// never exist disabled.
pub fn tracepoint_attr(id: u64, stack: bool) -> perf_event_attr {
    let mut attr = base_attr();
    attr.type_ = pe::bindings::PERF_TYPE_TRACEPOINT;
    attr.config = id;
    attr.__bindgen_anon_1.sample_period = 1;
    attr.sample_type |= pe::bindings::PERF_SAMPLE_RAW as u64;
    if stack {
        attr.sample_type |= pe::bindings::PERF_SAMPLE_CALLCHAIN as u64;
        attr.set_exclude_callchain_kernel(1);
        attr.sample_max_stack = MAX_STACK;
    }
    attr
}

/// The sideband event: no samples, only COMM (with exec flag), FORK/EXIT
/// and MMAP2 of every task, and with `namespaces` NAMESPACES (which needs
/// CAP_PERFMON: EACCES otherwise). Opened disabled, enabled once its ring
/// is mapped.
pub fn sideband_attr(wakeup_bytes: u32, namespaces: bool) -> perf_event_attr {
    let mut attr = ring_owner_attr(wakeup_bytes);
    attr.set_comm(1);
    attr.set_comm_exec(1);
    attr.set_task(1);
    attr.set_mmap(1);
    attr.set_mmap2(1);
    attr.set_namespaces(namespaces as u64);
    attr
}

/// The owner of a CPU's tracepoint ring: a dummy event that records
/// nothing itself; the tracepoints write into its ring. Kept apart from the
/// sideband ring so that LOST counts only tracepoint events.
pub fn ring_owner_attr(wakeup_bytes: u32) -> perf_event_attr {
    let mut attr = user_dummy_attr();
    attr.set_disabled(1);
    attr.set_watermark(1);
    attr.__bindgen_anon_2.wakeup_watermark = wakeup_bytes;
    attr
}

/// An enabled event that records task exits, and nothing else: opened
/// briefly into an event ring so that a thread exit writes a record there,
/// which makes the kernel write any pending LOST first.
pub fn exit_probe_attr() -> perf_event_attr {
    let mut attr = user_dummy_attr();
    attr.set_task(1);
    attr
}

/// A software dummy event that counts nothing and samples nothing: the
/// carrier of side records and rings. User space only, which is all a
/// task record needs and what an unprivileged session may open.
fn user_dummy_attr() -> perf_event_attr {
    let mut attr = base_attr();
    attr.type_ = pe::bindings::PERF_TYPE_SOFTWARE;
    attr.config = pe::bindings::PERF_COUNT_SW_DUMMY as u64;
    attr.set_exclude_kernel(1);
    attr.set_exclude_hv(1);
    attr
}

/// `attr` as perf.data's attr section holds it (`tracepoint_decode`'s
/// copy of the kernel's struct): the fields and flags a session sets.
pub fn perf_data_attr(attr: &perf_event_attr) -> tracepoint_decode::PerfEventAttr {
    use tracepoint_decode::PerfEventAttrOptions as O;
    let flags = [
        (attr.disabled(), O::Disabled),
        (attr.exclude_kernel(), O::ExcludeKernel),
        (attr.exclude_hv(), O::ExcludeHypervisor),
        (attr.mmap(), O::Mmap),
        (attr.comm(), O::Comm),
        (attr.task(), O::Task),
        (attr.watermark(), O::Watermark),
        (attr.sample_id_all(), O::SampleIdAll),
        (attr.mmap2(), O::Mmap2),
        (attr.comm_exec(), O::CommExec),
        (attr.use_clockid(), O::UseClockId),
        (attr.namespaces(), O::Namespaces),
        (attr.exclude_callchain_kernel(), O::ExcludeCallchainKernel),
    ];
    let options = flags.iter().filter(|(set, _)| *set != 0).fold(0u64, |all, (_, bit)| all | bit.0);
    tracepoint_decode::PerfEventAttr {
        attr_type: tracepoint_decode::PerfEventAttrType(attr.type_),
        // The struct as the file holds it (VER7: up to sig_data). perf
        // refuses an attr whose size says it has more than perf knows
        // ("more recent and unsupported ABI"), and config3 (VER8) is unused.
        size: tracepoint_decode::PerfEventAttrSize(std::mem::size_of::<tracepoint_decode::PerfEventAttr>() as u32),
        config: attr.config,
        // SAFETY: both members of this union are a u64, and every bit
        // pattern is a valid u64.
        sample_time: unsafe { attr.__bindgen_anon_1.sample_period },
        sample_type: tracepoint_decode::PerfEventAttrSampleType(attr.sample_type),
        read_format: tracepoint_decode::PerfEventAttrReadFormat(attr.read_format),
        options: O(options),
        clockid: attr.clockid as u32,
        sample_max_stack: attr.sample_max_stack,
        ..Default::default()
    }
}

/// The size of a memory page, which perf.data's tracing data records.
pub fn page_size() -> u32 {
    // SAFETY: sysconf(3) reads a system value and touches no memory of ours.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u32::try_from(size).unwrap_or(4096)
}

/// `perf_event_open(attr, -1, cpu, output, PERF_FLAG_FD_CLOEXEC [| PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_NO_GROUP])`.
///
/// With `output`, the kernel redirects the new event into `output`'s ring
/// before it installs the event (kernel/events/core.c, `perf_event_open`:
/// `perf_event_set_output` precedes `perf_install_in_context`), so an event
/// opened enabled never has a moment without a ring.
pub fn open(attr: &mut perf_event_attr, cpu: u32, output: Option<BorrowedFd<'_>>) -> Result<OwnedFd, Errno> {
    let mut flags = pe::bindings::PERF_FLAG_FD_CLOEXEC;
    let group = match output {
        Some(fd) => {
            flags |= pe::bindings::PERF_FLAG_FD_OUTPUT | pe::bindings::PERF_FLAG_FD_NO_GROUP;
            fd.as_raw_fd()
        }
        None => -1,
    };
    // SAFETY: `attr` is a fully initialised perf_event_attr with `size` set;
    // the kernel only reads it (and may write `size` back on E2BIG).
    let fd = unsafe { pe::perf_event_open(attr, -1, cpu as libc::c_int, group, flags as libc::c_ulong) };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: perf_event_open returned a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)`.
pub fn enable(fd: BorrowedFd<'_>) -> Result<(), Errno> {
    // SAFETY: ENABLE takes an integer argument and touches no user memory.
    let rc = unsafe { pe::ioctls::ENABLE(fd.as_raw_fd(), 0) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// `ioctl(fd, PERF_EVENT_IOC_DISABLE, 0)`.
pub fn disable(fd: BorrowedFd<'_>) -> Result<(), Errno> {
    // SAFETY: DISABLE takes an integer argument and touches no user memory.
    let rc = unsafe { pe::ioctls::DISABLE(fd.as_raw_fd(), 0) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// `ioctl(fd, PERF_EVENT_IOC_ID, &id)`: the id records carry.
pub fn event_id(fd: BorrowedFd<'_>) -> Result<u64, Errno> {
    let mut id = 0u64;
    // SAFETY: ID writes one u64 through the pointer, which is valid.
    let rc = unsafe { pe::ioctls::ID(fd.as_raw_fd(), &mut id) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(id)
}

/// `ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter)`: an ftrace filter on a
/// tracepoint event, replacing any before it.
pub fn set_filter(fd: BorrowedFd<'_>, filter: &std::ffi::CStr) -> Result<(), Errno> {
    // SAFETY: SET_FILTER reads a NUL-terminated string, which `filter` is
    // and which outlives the call; the kernel copies it and keeps nothing.
    let rc = unsafe { pe::ioctls::SET_FILTER(fd.as_raw_fd(), filter.as_ptr().cast_mut()) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// `ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, output)`.
pub fn set_output(fd: BorrowedFd<'_>, output: BorrowedFd<'_>) -> Result<(), Errno> {
    // SAFETY: SET_OUTPUT takes a descriptor number and touches no user memory.
    let rc = unsafe { pe::ioctls::SET_OUTPUT(fd.as_raw_fd(), output.as_raw_fd()) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds: the clock of every record.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `sched_setaffinity(0, {cpu})`: pins the calling thread.
pub fn pin_current_thread(cpu: u32) -> Result<(), Errno> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu as usize >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(Errno(libc::EINVAL));
    }
    // SAFETY: cpu is within the set's capacity (checked above).
    unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// `sched_getaffinity(0)` as a saved set, to restore later.
pub fn current_affinity() -> Result<libc::cpu_set_t, Errno> {
    // SAFETY: zeroed cpu_set_t is a valid empty set to be filled in.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is writable and of the size passed.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(set)
}

/// `sched_setaffinity(0, set)`.
pub fn set_affinity(set: &libc::cpu_set_t) -> Result<(), Errno> {
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// `sched_setscheduler(0, SCHED_FIFO, {priority})` for the calling thread.
pub fn set_fifo(priority: i32) -> Result<(), Errno> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// `sched_getcpu()`.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

/// `poll(fds, timeout)` for readability; returns when any is ready or time is up.
/// A new eventfd (nonblocking, close-on-exec), readable once [`wake`]
/// has written to it: what a thread asleep in [`poll_readable`] is woken
/// with.
pub fn event_fd() -> Result<OwnedFd, Errno> {
    // SAFETY: eventfd(2) takes no pointers; a non-negative result is a new
    // descriptor that nothing else owns.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: `fd` was just returned by eventfd(2) and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Makes the eventfd `fd` readable (adds 1 to its counter).
pub fn wake(fd: BorrowedFd<'_>) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: writes the 8 bytes of `one`, which lives across the call, to
    // a descriptor the caller keeps open. A full counter (EAGAIN) is still
    // readable, which is all a waker needs.
    unsafe { libc::write(fd.as_raw_fd(), one.as_ptr().cast(), one.len()) };
}

pub fn poll_readable(fds: &[BorrowedFd<'_>], timeout_ms: i32) -> Result<(), Errno> {
    let mut pfds: Vec<libc::pollfd> =
        fds.iter().map(|fd| libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 }).collect();
    // SAFETY: `pfds` is a valid array of pollfd of the length passed.
    let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms) };
    if rc < 0 {
        let errno = last_errno();
        if errno.0 != libc::EINTR {
            return Err(errno);
        }
    }
    Ok(())
}

/// The online CPUs, from `/sys/devices/system/cpu/online` (`0-3,5`).
pub fn online_cpus() -> std::io::Result<Vec<u32>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    parse_cpu_list(&text).ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "bad CPU list"))
}

pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// Writes `value` into the 4-byte word at `address` in process `pid`, as
/// ptrace would: the kernel allows it only to a caller with ptrace rights
/// over `pid` (PTRACE_MODE_ATTACH_REALCREDS), what `perf record -p` needs.
pub fn write_process_word(pid: u32, address: u64, value: u32) -> Result<(), Errno> {
    let bytes = value.to_ne_bytes();
    let local = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: 4 };
    let remote = libc::iovec { iov_base: address as usize as *mut libc::c_void, iov_len: 4 };
    // SAFETY: `local` points at 4 readable bytes that outlive the call;
    // `remote` names memory in another process, which the kernel checks.
    let written = unsafe { libc::process_vm_writev(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    match written {
        4 => Ok(()),
        -1 => Err(last_errno()),
        _ => Err(Errno(libc::EFAULT)),
    }
}

/// Reads the 4-byte word at `address` in process `pid`; the same rights
/// as [`write_process_word`].
pub fn read_process_word(pid: u32, address: u64) -> Result<u32, Errno> {
    let mut bytes = [0u8; 4];
    let local = libc::iovec { iov_base: bytes.as_mut_ptr().cast(), iov_len: 4 };
    let remote = libc::iovec { iov_base: address as usize as *mut libc::c_void, iov_len: 4 };
    // SAFETY: `local` points at 4 writable bytes that outlive the call;
    // `remote` names memory in another process, which the kernel checks.
    let read = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    match read {
        4 => Ok(u32::from_ne_bytes(bytes)),
        -1 => Err(last_errno()),
        _ => Err(Errno(libc::EFAULT)),
    }
}

/// Whether process `pid` exists (a zombie counts until it is reaped).
pub fn process_exists(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let result = unsafe { libc::kill(pid as libc::pid_t, 0) };
    result == 0 || last_errno().0 != libc::ESRCH
}

/// This process's effective user id.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_ranges_and_singles() {
        assert_eq!(parse_cpu_list("0-3,5\n"), Some(vec![0, 1, 2, 3, 5]));
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
    }

    #[test]
    fn the_session_clock_moves_forward() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a);
    }
}

//! The shared-memory transport, the producer's half: where the kernel has
//! no user_events, tracepoints register in a file of this process's, and
//! events go into a ring per thread that a recorder reads (the protocol is
//! [`shm_layout`](crate::shm_layout)'s module doc).
//!
//! - [`registry`]: `PID.registry`, one slot per registered tracepoint.
//! - [`ring`]: `PID.TID.ring`, one per thread that emitted while enabled.
//! - [`path`]: their paths, built without allocating.
//!
//! This module sets up the directory, removes what crashed processes left,
//! and keeps the files to this process: an exit handler removes them, and a
//! fork child handler gives the child a registry of its own before any of
//! its code runs, so that it never writes the parent's files.
//!
//! The enable word stays where it is; a recorder writes it. So a disabled
//! check is the same one load, whichever transport registered it.
//!
//! # Safety
//! The fork child handler is `unsafe extern "C"` as `pthread_atfork`
//! wants; it makes only async-signal-safe calls (see [`after_fork_in_child`]).
#![allow(unsafe_code)]

mod path;
mod registry;
mod ring;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Once, OnceLock};

use path::ShmPath;
use registry::Registry;

use super::field::Field;
use super::value::Value;
use crate::shm_layout::{self, MAX_DESCRIPTOR_LEN, MAX_RING_DATA_LEN, MIN_RING_DATA_LEN, RING_SUFFIX, UNREGISTER_WAIT_MS};
use crate::sys;
use crate::Error;

/// Overrides the data area of new rings, in KiB: a power of two, clamped to
/// what a recorder accepts (4 KiB to 64 MiB).
pub const SHM_RING_KIB_ENV: &str = "USERTRACE_SHM_RING_KIB";

/// `monotonic` makes every ring's times `clock_gettime(CLOCK_MONOTONIC)`;
/// unset or `auto`, rings take the raw TSC where that is the same clock
/// scaled (see "Time stamps" in [`shm_layout`]).
pub const SHM_CLOCK_ENV: &str = "USERTRACE_SHM_CLOCK";

/// The euid whose directory this process's files are in (a fork child
/// must not call anything that could allocate to learn it).
static UID: AtomicU32 = AtomicU32::new(0);

/// Registers `format` (the kernel's format string) with the enable word at
/// `address`; returns the slot. The caller holds the registration lock.
pub(crate) fn register(event: &str, format: &str, address: u64) -> Result<u32, Error> {
    if format.len() > MAX_DESCRIPTOR_LEN {
        return Err(Error::FormatTooLong { event: event.to_owned(), len: format.len(), max: MAX_DESCRIPTOR_LEN });
    }
    let registry = match Registry::current() {
        Some(registry) => registry,
        None => open_registry()?,
    };
    registry.add(format.as_bytes(), address).ok_or_else(|| Error::TooManyEvents { event: event.to_owned() })
}

/// Frees `slot`, by the layout's protocol; an error if a live recorder
/// holds it too long (the word must then stay allocated).
pub(crate) fn unregister(event: &str, slot: u32) -> Result<(), Error> {
    // No registry (a fork child that could not make one): nobody can find
    // the word to write it.
    let Some(registry) = Registry::current() else { return Ok(()) };
    registry
        .remove(slot)
        .map_err(|recorder| Error::UnregistrationTimedOut { event: event.to_owned(), recorder, waited_ms: UNREGISTER_WAIT_MS })
}

/// Writes one event for `slot` into this thread's ring.
#[inline]
pub(crate) fn write(slot: u32, event: &str, fields: &[Field], values: &[Value<'_>]) -> Result<(), Error> {
    ring::write(slot, event, fields, values)
}

/// The first shared-memory registration: the ring size, the directory,
/// the sweep of stale files, the handlers, then the registry itself.
#[cold]
fn open_registry() -> Result<Registry, Error> {
    ring::set_data_len(ring_data_len()?);
    ring::set_tsc(parse_clock(std::env::var_os(SHM_CLOCK_ENV).as_deref())? && tsc_is_monotonic_scaled());
    let uid = sys::euid();
    UID.store(uid, Ordering::Relaxed);
    prepare_directory(uid)?;
    remove_stale_files(uid);
    install_handlers()?;
    let pid = sys::pid();
    let instance = Registry::new_instance();
    let path = ShmPath::registry(uid, pid, instance);
    let registry = Registry::create(&path, pid, instance).map_err(|(op, errno)| Error::SharedMemory { op, path: path.display(), errno })?;
    registry.publish();
    Ok(registry)
}

/// `USERTRACE_SHM_RING_KIB`, read once, in bytes.
fn ring_data_len() -> Result<usize, Error> {
    static LEN: OnceLock<Result<usize, Error>> = OnceLock::new();
    LEN.get_or_init(|| parse_ring_kib(std::env::var_os(SHM_RING_KIB_ENV).as_deref())).clone()
}

pub(crate) fn parse_ring_kib(value: Option<&std::ffi::OsStr>) -> Result<usize, Error> {
    let Some(value) = value else { return Ok(shm_layout::DEFAULT_RING_DATA_LEN) };
    let kib = value.to_str().and_then(|v| v.trim().parse::<u64>().ok()).filter(|k| k.is_power_of_two());
    let Some(kib) = kib else {
        return Err(Error::InvalidSetting {
            variable: SHM_RING_KIB_ENV,
            value: value.to_string_lossy().into_owned(),
            allowed: "a power of two of KiB (4 to 65536), e.g. 256",
        });
    };
    let bytes = kib.saturating_mul(1024).clamp(MIN_RING_DATA_LEN as u64, MAX_RING_DATA_LEN as u64);
    Ok(bytes as usize)
}

/// `USERTRACE_SHM_CLOCK`: whether the TSC may be taken (`auto`, unset),
/// or not (`monotonic`).
pub(crate) fn parse_clock(value: Option<&std::ffi::OsStr>) -> Result<bool, Error> {
    match value.map(|v| v.to_str().map(str::trim)) {
        None | Some(Some("auto" | "")) => Ok(true),
        Some(Some("monotonic")) => Ok(false),
        Some(_) => Err(Error::InvalidSetting {
            variable: SHM_CLOCK_ENV,
            value: value.unwrap_or_default().to_string_lossy().into_owned(),
            allowed: "monotonic (clock_gettime for every event), or auto (the TSC where it is the monotonic clock's source)",
        }),
    }
}

/// Whether CLOCK_MONOTONIC is the TSC scaled, so that a recorder can
/// convert TSC stamps to it: x86-64, the kernel's clocksource `tsc`, and a
/// TSC that ticks at one rate in every power state (`constant_tsc`,
/// `nonstop_tsc`). Read once, at the first registration.
fn tsc_is_monotonic_scaled() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let source = std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource").unwrap_or_default();
    if source.trim() != "tsc" {
        return false;
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo.lines().find(|l| l.starts_with("flags")).unwrap_or_default();
    let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
    has("constant_tsc") && has("nonstop_tsc")
}

/// Makes the directory (0700), or checks that the one there is ours and
/// private: in world-writable /dev/shm, anyone could have made it first.
/// The handoff socket (`handoff`) lives there too.
pub(crate) fn prepare_directory(uid: u32) -> Result<(), Error> {
    let dir = shm_layout::directory(uid);
    let shown = || dir.display().to_string();
    match sys::make_private_directory(&dir) {
        Ok(()) | Err(sys::Errno(libc::EEXIST)) => {}
        Err(errno) => return Err(Error::SharedMemory { op: "create directory", path: shown(), errno }),
    }
    // Not followed: a symlink there is refused, whatever it points at.
    let (is_dir, owner, mode) =
        sys::directory_owner_and_mode(&dir).map_err(|errno| Error::SharedMemory { op: "check directory", path: shown(), errno })?;
    match unsafe_because(is_dir, owner, mode, uid) {
        Some(reason) => Err(Error::UnsafeDirectory { path: shown(), reason }),
        None => Ok(()),
    }
}

/// Why a directory with this type, owner and mode is not safe for user
/// `uid`'s files, if it is not.
fn unsafe_because(is_dir: bool, owner: u32, mode: u32, uid: u32) -> Option<String> {
    if !is_dir {
        Some("is not a directory".to_owned())
    } else if owner != uid {
        Some(format!("belongs to uid {owner}, not {uid}"))
    } else if mode & 0o077 != 0 {
        Some(format!("has mode {mode:04o}, open to group or others"))
    } else {
        None
    }
}

/// Removes the files that nobody will read: those of processes that no
/// longer exist (crashed, so their exit handler never ran) and this pid's
/// from before an exec (an exec runs no exit handler), unless a recorder
/// holds their registry, which then reads what is left and removes them.
/// A registry from another PID namespace (a container sharing /dev/shm)
/// names its process by a pid that means nothing here: its files stay.
/// One `kill(pid, 0)` per file: cheap, and only at the first registration.
fn remove_stale_files(uid: u32) {
    let dir = shm_layout::directory(uid);
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let me = sys::pid();
    let my_namespace = shm_layout::own_pid_namespace();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let ids = shm_layout::parse_registry_file_name(name).or_else(|| shm_layout::parse_ring_file_name(name).map(|(p, i, _)| (p, i)));
        let Some((pid, instance)) = ids else { continue };
        // A live process's files, other than ours from before an exec.
        if pid != me && sys::process_exists(pid) {
            continue;
        }
        let header = registry_header(&dir.join(shm_layout::registry_file_name(pid, instance)));
        let held = header.as_ref().is_some_and(|h| h.recorder != 0 && sys::process_exists(h.recorder));
        let foreign = header.as_ref().is_some_and(|h| shm_layout::in_another_pid_namespace(h.pid_namespace, my_namespace));
        if !held && !foreign {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The header of the registry file at `path`, if it has a valid one.
fn registry_header(path: &std::path::Path) -> Option<shm_layout::RegistryHeader> {
    use std::io::Read;
    let mut bytes = [0u8; shm_layout::REGISTRY_HEADER_LEN];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut bytes)).ok()?;
    shm_layout::RegistryHeader::parse(&bytes).ok()
}

/// The exit and fork handlers, once per process (a fork child inherits
/// both, and the `Once` with them).
fn install_handlers() -> Result<(), Error> {
    static INSTALLED: Once = Once::new();
    let mut result = Ok(());
    INSTALLED.call_once(|| {
        result = sys::at_exit(remove_files_at_exit)
            // SAFETY: `after_fork_in_child` makes only async-signal-safe
            // calls, as pthread_atfork(3) requires of a child handler.
            .and_then(|()| unsafe { sys::at_fork_in_child(after_fork_in_child) })
            .map_err(|errno| Error::SharedMemory { op: "install handlers for", path: "exit and fork".into(), errno });
    });
    result
}

/// At exit: this process's registry and rings go, unless a recorder holds
/// the registry: it needs the slots to read what is left in the rings, and
/// removes both once it has.
extern "C" fn remove_files_at_exit() {
    // Nothing here may unwind into libc.
    let _ = std::panic::catch_unwind(|| {
        let Some(registry) = Registry::current() else { return };
        let (uid, pid) = (UID.load(Ordering::Relaxed), sys::pid());
        if registry.recorder() != 0 {
            return;
        }
        let instance = registry.instance();
        let _ = sys::unlink(ShmPath::registry(uid, pid, instance).as_cstr());
        let Ok(entries) = std::fs::read_dir(shm_layout::directory(uid)) else { return };
        let prefix = format!("{pid}.{instance}.");
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_str().is_some_and(|n| n.starts_with(&prefix) && n.ends_with(RING_SUFFIX)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    });
}

/// In a fork child, before `fork()` returns there: the parent's rings are
/// abandoned (the epoch), and the child gets a registry of its own, a copy
/// of the parent's live slots (the child has copies of their words at the
/// same addresses), so the parent's registry is never changed by the
/// child. Async-signal-safe: atomics, stack buffers, and open, ftruncate,
/// mmap, munmap, unlink, read, getpid.
unsafe extern "C" fn after_fork_in_child() {
    ring::abandon_rings_after_fork();
    let Some(parent) = Registry::current() else { return };
    let pid = sys::pid();
    let instance = Registry::new_instance();
    let path = ShmPath::registry(UID.load(Ordering::Relaxed), pid, instance);
    match Registry::create(&path, pid, instance) {
        Ok(child) => {
            child.copy_slots_from(parent);
            child.publish();
        }
        // The child goes without: its tracepoints stay registered as far
        // as it knows, but no recorder can find them.
        Err(_) => {
            registry::forget_current();
        }
    }
    // SAFETY: the parent's mapping is no longer the process's registry,
    // and the child has no other thread to use it.
    unsafe { parent.unmap() };
}

#[cfg(test)]
mod tests;

//! Why tracing is, or is not, available in this process.
//!
//! The same probe serves [`status()`] and the producer's lazy open of
//! `user_events_data`, so what `usertrace status` says is exactly what a
//! registration would meet.
//!
//! The truth comes first. When the probe cannot tell why there is no
//! `user_events_data` (no tracefs, none in it, or a tracefs root this user
//! may not look into), the kernel's build config decides: when it says
//! CONFIG_USER_EVENTS is not set, no mount or permission will help, and
//! the verdict says so. Only when the config says `=y`, or cannot be read,
//! does the probe's advice (mount tracefs, grant access) stand. A
//! `user_events_data` that exists outranks the config: a file under
//! `/boot` can be stale, the kernel's tracefs cannot. Every language's
//! `status()` and `transport()`, and `usertrace status`, take this one
//! verdict.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::kernel_config::{ConfigValue, KernelConfig};
use crate::sys::{self, OwnedFd};
use crate::tracefs;

/// The verdict of a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// `user_events_data` opened for writing: tracepoints will register.
    Available,
    /// No tracefs mount point was found.
    TracefsNotMounted,
    /// The kernel has no user_events: its build config says
    /// CONFIG_USER_EVENTS is not set (or it is older than 6.4), whether
    /// tracefs is mounted or not; or tracefs is mounted but has no
    /// `user_events_data`. Also the verdict on every OS but Linux, which
    /// has no user_events at all (`tracefs` and `kernel_config` are then
    /// `None`, and the message says "Linux only").
    UserEventsMissing,
    /// `user_events_data` exists but this process may not open it.
    PermissionDenied,
    /// Opening `user_events_data` failed for another reason.
    OpenFailed,
}

impl Availability {
    /// Every verdict, in code order: the one table the bindings are held to.
    pub const ALL: [Availability; 5] = [
        Availability::Available,
        Availability::TracefsNotMounted,
        Availability::UserEventsMissing,
        Availability::PermissionDenied,
        Availability::OpenFailed,
    ];

    /// The stable number of this verdict (0 is available). Never renumber.
    pub const fn code(self) -> u32 {
        match self {
            Availability::Available => 0,
            Availability::TracefsNotMounted => 1,
            Availability::UserEventsMissing => 2,
            Availability::PermissionDenied => 3,
            Availability::OpenFailed => 4,
        }
    }

    /// The verdict's name in the bindings, e.g. `tracefs_not_mounted`
    /// (Python's strings; upper-cased for the C and Java constants).
    pub const fn name(self) -> &'static str {
        match self {
            Availability::Available => "available",
            Availability::TracefsNotMounted => "tracefs_not_mounted",
            Availability::UserEventsMissing => "user_events_missing",
            Availability::PermissionDenied => "permission_denied",
            Availability::OpenFailed => "open_failed",
        }
    }
}

/// What [`status()`] found, with every path it looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The verdict.
    pub availability: Availability,
    /// The tracefs mount point in use, if one was found.
    pub tracefs: Option<PathBuf>,
    /// The mount points tried, in order.
    pub tried: Vec<PathBuf>,
    /// The errno of a failed open, when there was one.
    pub errno: Option<i32>,
    /// The kernel's build config, when the verdict needed it: read only
    /// when `user_events_data` does not exist, or may not be looked for.
    pub kernel_config: Option<KernelConfig>,
}

impl Status {
    /// The status on an OS without user_events (every one but Linux):
    /// nothing to look for, and nothing tried.
    fn linux_only() -> Status {
        Status { availability: Availability::UserEventsMissing, tracefs: None, tried: Vec::new(), errno: None, kernel_config: None }
    }

    /// Whether `user_events_data` exists: it opened, or failed for a reason
    /// other than ENOENT. Then the kernel has user_events, whatever its
    /// build config's file says.
    pub fn user_events_data_exists(&self) -> bool {
        self.is_available() || self.errno.is_some_and(|e| e != libc::ENOENT)
    }

    /// The probe's verdict weighed against the kernel's build config, read
    /// by `config` only when the probe cannot tell (see the module doc).
    pub(crate) fn weigh(&mut self, config: impl FnOnce() -> KernelConfig) {
        let off_linux = self.availability == Availability::UserEventsMissing && self.tracefs.is_none();
        if self.user_events_data_exists() || off_linux {
            return;
        }
        let config = config();
        if config.lacks_user_events() {
            self.availability = Availability::UserEventsMissing;
        }
        self.kernel_config = Some(config);
    }

    /// Whether tracepoints will register.
    pub fn is_available(&self) -> bool {
        self.availability == Availability::Available
    }

    /// The `user_events_data` path, when tracefs was found.
    pub fn data_path(&self) -> Option<PathBuf> {
        self.tracefs.as_ref().map(|t| t.join("user_events_data"))
    }
}

/// The verdict and what to do, in a sentence: the config's finding first
/// when it decided, else the probe's, with what the config adds to it.
impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(config) = &self.kernel_config else { return self.fmt_probed(f) };
        let release = if config.release.is_empty() { "unknown" } else { config.release.as_str() };
        match &config.found {
            Some((path, ConfigValue::NotSet)) => {
                lacks_user_events(f, release, format_args!("{} says `# CONFIG_USER_EVENTS is not set`", path.display()))
            }
            Some((path, ConfigValue::Absent)) => lacks_user_events(
                f,
                release,
                format_args!("{} has no CONFIG_USER_EVENTS line: it predates Linux 6.4 or lacks ftrace", path.display()),
            ),
            Some((path, ConfigValue::Set)) => self.fmt_config_has_user_events(f, release, path),
            None => {
                self.fmt_probed(f)?;
                write!(
                    f,
                    "; the kernel's build config was unreadable (tried {}), so whether it has CONFIG_USER_EVENTS is not known",
                    config.tried_list()
                )
            }
        }
    }
}

/// The verdict on a kernel built without user_events, and what to do.
fn lacks_user_events(f: &mut fmt::Formatter<'_>, release: &str, says: fmt::Arguments<'_>) -> fmt::Result {
    write!(
        f,
        "user_events is not available: this kernel ({release}) lacks user_events ({says}), so mounting tracefs \
         or granting access will not help; kernels that have it: Ubuntu 24.04 and later, Azure Linux, WSL2, \
         or any Linux 6.4 or later built with CONFIG_USER_EVENTS=y; boot one of those, or record through \
         shared memory (see transport)"
    )
}

impl Status {
    /// The verdict where the config says `CONFIG_USER_EVENTS=y`: the
    /// tracefs that was found is not this kernel's, or it needs mounting.
    fn fmt_config_has_user_events(&self, f: &mut fmt::Formatter<'_>, release: &str, config: &Path) -> fmt::Result {
        let has = format!("this kernel ({release}) has CONFIG_USER_EVENTS=y ({})", config.display());
        match (self.availability, self.data_path(), self.tracefs.as_deref()) {
            (Availability::UserEventsMissing, Some(data), Some(tracefs)) => write!(
                f,
                "user_events is not available: {} does not exist, yet {has}: {} is not this kernel's tracefs; \
                 mount that with `mount -t tracefs nodev /sys/kernel/tracing`, and unset {} or point it there",
                data.display(),
                tracefs.display(),
                tracefs::TRACEFS_ENV,
            ),
            (Availability::TracefsNotMounted, _, _) => {
                self.fmt_probed(f)?;
                write!(f, "; {has}, so mounting tracefs is all it takes")
            }
            _ => self.fmt_probed(f),
        }
    }

    /// What the probe alone says.
    fn fmt_probed(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tried = self.tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        let data = self.data_path().map(|p| p.display().to_string()).unwrap_or_default();
        match self.availability {
            Availability::Available => write!(f, "user_events is available: {data} is writable"),
            Availability::TracefsNotMounted => write!(
                f,
                "user_events is not available: tracefs is not mounted (tried {tried}); \
                 mount it with `mount -t tracefs nodev /sys/kernel/tracing` or set {} to its mount point",
                tracefs::TRACEFS_ENV
            ),
            // Only off Linux: on Linux this verdict comes after tracefs was found.
            Availability::UserEventsMissing if self.tracefs.is_none() => write!(
                f,
                "user_events is not available: user_events is Linux only, and this is {}: \
                 tracepoints never enable here, so emitting does nothing and registering fails",
                std::env::consts::OS
            ),
            Availability::UserEventsMissing => write!(
                f,
                "user_events is not available: {data} does not exist, so the kernel ({}) lacks \
                 CONFIG_USER_EVENTS; it needs Linux 6.4 or later built with CONFIG_USER_EVENTS=y",
                kernel_release()
            ),
            Availability::PermissionDenied => write!(
                f,
                "user_events is not available: permission denied opening {data}; run as root, or give \
                 this user write access (e.g. `chgrp tracing` the tracefs root and user_events_data \
                 and `chmod g+rx`/`g+rw` them)"
            ),
            Availability::OpenFailed => write!(
                f,
                "user_events is not available: opening {data} failed: {}",
                sys::Errno(self.errno.unwrap_or(0))
            ),
        }
    }
}

/// Probes tracefs and `user_events_data` now, and when that cannot tell
/// why there is no `user_events_data`, reads the kernel's build config
/// (see the module doc). The probe is never cached: each call looks again,
/// so a later mount or permission change is seen.
///
/// `USERTRACE_TRACEFS` overrides where tracefs is looked for.
///
/// ```
/// let status = usertrace::status();
/// if !status.is_available() {
///     // The message says what is missing and how to fix it.
///     eprintln!("tracing is off: {status}");
/// }
/// ```
pub fn status() -> Status {
    match probe() {
        Ok((_fd, status)) => status,
        Err(status) => *weighed(status),
    }
}

/// A failed probe's status, weighed against the running kernel's config:
/// what [`status()`] says, and what a registration's error carries.
pub(crate) fn weighed(mut probed: Box<Status>) -> Box<Status> {
    probed.weigh(KernelConfig::running);
    probed
}

/// Finds tracefs and opens `user_events_data` read-write; a failure's
/// status is boxed, as [`Error::Unavailable`](crate::Error::Unavailable)
/// carries it.
pub(crate) fn probe() -> Result<(OwnedFd, Status), Box<Status>> {
    if !sys::OS_HAS_USER_EVENTS {
        return Err(Box::new(Status::linux_only()));
    }
    let tried = tracefs::candidates();
    let mut status = Status { availability: Availability::TracefsNotMounted, tracefs: None, tried, errno: None, kernel_config: None };
    let Some(mount) = status.tried.iter().find(|d| tracefs::is_mounted(d) || d.join("user_events_data").exists()).cloned()
    else {
        // tracefs' root is 0700 by default: an unprivileged user cannot look
        // inside it, which is a permission problem, not a missing mount.
        if status.tried.iter().any(|d| is_permission_denied(d)) {
            status.availability = Availability::PermissionDenied;
            status.tracefs = status.tried.iter().find(|d| is_permission_denied(d)).cloned();
        }
        return Err(Box::new(status));
    };
    status.tracefs = Some(mount.clone());
    let data = mount.join("user_events_data");
    let Some(path) = sys::path_to_cstring(&data) else {
        status.availability = Availability::OpenFailed;
        status.errno = Some(libc::EINVAL);
        return Err(Box::new(status));
    };
    match sys::open_read_write(&path) {
        Ok(fd) => {
            status.availability = Availability::Available;
            Ok((fd, status))
        }
        Err(errno) => {
            status.errno = Some(errno.0);
            status.availability = match errno.0 {
                libc::ENOENT => Availability::UserEventsMissing,
                libc::EACCES | libc::EPERM => Availability::PermissionDenied,
                _ => Availability::OpenFailed,
            };
            Err(Box::new(status))
        }
    }
}

fn is_permission_denied(dir: &std::path::Path) -> bool {
    matches!(std::fs::read_dir(dir), Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied)
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_owned()).unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests;

//! Why tracing is, or is not, available in this process.
//!
//! The same probe serves [`status()`] and the producer's lazy open of
//! `user_events_data`, so what `usertrace status` says is exactly what a
//! registration would meet.

use std::fmt;
use std::path::PathBuf;

use crate::sys::{self, OwnedFd};
use crate::tracefs;

/// The verdict of a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// `user_events_data` opened for writing: tracepoints will register.
    Available,
    /// No tracefs mount point was found.
    TracefsNotMounted,
    /// tracefs is mounted but has no `user_events_data`: the kernel was
    /// built without CONFIG_USER_EVENTS (or is older than 6.4). Also the
    /// verdict on every OS but Linux, which has no user_events at all
    /// (`tracefs` is then `None`, and the message says "Linux only").
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
}

impl Status {
    /// The status on an OS without user_events (every one but Linux):
    /// nothing to look for, and nothing tried.
    fn linux_only() -> Status {
        Status { availability: Availability::UserEventsMissing, tracefs: None, tried: Vec::new(), errno: None }
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

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

/// Probes tracefs and `user_events_data` now. Never cached: each call looks
/// again, so a later mount or permission change is seen.
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
        Err(status) => status,
    }
}

/// Finds tracefs and opens `user_events_data` read-write.
pub(crate) fn probe() -> Result<(OwnedFd, Status), Status> {
    if !sys::OS_HAS_USER_EVENTS {
        return Err(Status::linux_only());
    }
    let tried = tracefs::candidates();
    let mut status = Status { availability: Availability::TracefsNotMounted, tracefs: None, tried, errno: None };
    let Some(mount) = status.tried.iter().find(|d| tracefs::is_mounted(d) || d.join("user_events_data").exists()).cloned()
    else {
        // tracefs' root is 0700 by default: an unprivileged user cannot look
        // inside it, which is a permission problem, not a missing mount.
        if status.tried.iter().any(|d| is_permission_denied(d)) {
            status.availability = Availability::PermissionDenied;
            status.tracefs = status.tried.iter().find(|d| is_permission_denied(d)).cloned();
        }
        return Err(status);
    };
    status.tracefs = Some(mount.clone());
    let data = mount.join("user_events_data");
    let Some(path) = sys::path_to_cstring(&data) else {
        status.availability = Availability::OpenFailed;
        status.errno = Some(libc::EINVAL);
        return Err(status);
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
            Err(status)
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
mod tests {
    use super::*;

    #[test]
    fn off_linux_the_status_says_user_events_are_linux_only() {
        // What `status()` answers on every OS but Linux; built, and so
        // tested, on Linux too.
        let status = Status::linux_only();
        assert!(!status.is_available());
        assert_eq!(status.availability, Availability::UserEventsMissing);
        assert_eq!(status.data_path(), None);
        let message = status.to_string();
        assert!(message.contains("Linux only"), "{message}");
        assert!(message.contains(std::env::consts::OS), "{message}");
    }

    #[test]
    fn on_linux_a_missing_user_events_data_is_the_kernel_s_config_not_the_os() {
        let status = Status {
            availability: Availability::UserEventsMissing,
            tracefs: Some(PathBuf::from("/sys/kernel/tracing")),
            tried: vec![PathBuf::from("/sys/kernel/tracing")],
            errno: Some(libc::ENOENT),
        };
        let message = status.to_string();
        assert!(message.contains("lacks CONFIG_USER_EVENTS"), "{message}");
        assert!(!message.contains("Linux only"), "{message}");
    }

    #[test]
    fn status_probes_tracefs_only_where_user_events_exist() {
        let status = status();
        if sys::OS_HAS_USER_EVENTS {
            assert!(!status.tried.is_empty(), "Linux looks for tracefs: {status:?}");
        } else {
            assert_eq!(status, Status::linux_only());
        }
    }
}

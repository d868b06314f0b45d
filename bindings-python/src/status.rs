//! `status()`: why tracing is or is not available.

use pyo3::prelude::*;
use usertrace::Availability;

/// Probes tracefs now: `(availability, tracefs, tried, errno, message)`.
/// `usertrace.status()` turns it into a `Status`.
#[pyfunction]
pub(crate) fn status() -> (&'static str, Option<String>, Vec<String>, Option<i32>, String) {
    let s = usertrace::status();
    let availability = match s.availability {
        Availability::Available => "available",
        Availability::TracefsNotMounted => "tracefs_not_mounted",
        Availability::UserEventsMissing => "user_events_missing",
        Availability::PermissionDenied => "permission_denied",
        Availability::OpenFailed => "open_failed",
    };
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    (
        availability,
        s.tracefs.as_deref().map(path),
        s.tried.iter().map(|p| path(p)).collect(),
        s.errno,
        s.to_string(),
    )
}

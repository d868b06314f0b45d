//! `status()`: why tracing is or is not available.

use pyo3::prelude::*;

/// Probes tracefs now: `(availability, tracefs, tried, errno, message)`,
/// the availability by its core name. `usertrace.status()` turns it into a
/// `Status`.
#[pyfunction]
pub(crate) fn status() -> (&'static str, Option<String>, Vec<String>, Option<i32>, String) {
    let s = usertrace::status();
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    (
        s.availability.name(),
        s.tracefs.as_deref().map(path),
        s.tried.iter().map(|p| path(p)).collect(),
        s.errno,
        s.to_string(),
    )
}

//! Core errors as Python exceptions.
//!
//! Every core error becomes `usertrace.UsertraceError` (an `OSError`) whose
//! `kind` is the shared `ErrorKind` code, except the ones that are about a
//! value handed to `emit`, which become the exceptions Python code expects
//! for bad arguments: `TypeError` for a count mismatch, `ValueError` for a
//! string with a NUL or a value too long for its field.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use usertrace::Error;

static ERROR_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `usertrace._errors.UsertraceError`, defined in Python so it can carry a
/// typed `kind`.
fn error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    ERROR_TYPE.import(py, "usertrace._errors", "UsertraceError")
}

/// A `UsertraceError(message, kind, errno)`.
pub(crate) fn usertrace_error(py: Python<'_>, error: &Error) -> PyErr {
    let errno = match error {
        Error::Kernel { errno, .. } => Some(errno.0),
        Error::Unavailable(status) => status.errno,
        _ => None,
    };
    match error_type(py).and_then(|t| t.call1((error.to_string(), error.kind().code(), errno))) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// The Python exception for a core error.
pub(crate) fn to_pyerr(py: Python<'_>, error: &Error) -> PyErr {
    match error {
        Error::ValueCount { .. } | Error::ValueMismatch { .. } => PyTypeError::new_err(error.to_string()),
        Error::InteriorNul { .. } | Error::ValueTooLong { .. } => PyValueError::new_err(error.to_string()),
        _ => usertrace_error(py, error),
    }
}

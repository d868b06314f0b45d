//! `transport()`: which way this process's events leave it, as the core's
//! `usertrace::transport()` decides (the rule lives there, not here).

use pyo3::prelude::*;

/// `(transport name, reason, sentence)`: the core's name (`user_events` or
/// `shm`), its reason, and its `Display`. `usertrace.transport()` turns it
/// into a `TransportChoice`. An invalid `USERTRACE_TRANSPORT` raises
/// `UsertraceError` with the core's message.
#[pyfunction]
pub(crate) fn transport(py: Python<'_>) -> PyResult<(&'static str, String, String)> {
    match usertrace::transport() {
        Ok(choice) => {
            let sentence = choice.to_string();
            Ok((choice.transport.name(), choice.reason, sentence))
        }
        Err(e) => Err(crate::errors::to_pyerr(py, &e)),
    }
}

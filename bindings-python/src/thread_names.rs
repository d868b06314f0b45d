//! `threading` names for the timeline on Pythons that keep them to
//! themselves.
//!
//! perf and every usertrace timeline name a thread by its kernel name. CPython
//! 3.14 and later give a `threading.Thread`'s name to the kernel when the
//! thread starts; before 3.14 they do not, so `Thread(name="hotl-side")`
//! shows as `python3`. On those Pythons, the first event a thread writes
//! (only while traced: a disabled emit does nothing at all) first names the
//! thread after its `threading` name, cut as the core's one rule cuts it
//! (`usertrace::set_current_thread_name`). Once per thread: a later
//! `thread.name = ...` is not followed. The main thread keeps the program's
//! name, and a thread that `threading` did not start (a `_DummyThread`) the
//! name its own creator gave it.

use std::cell::Cell;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

thread_local! {
    /// Whether this thread was considered already.
    static CONSIDERED: Cell<bool> = const { Cell::new(false) };
}

/// `threading`, when this Python does not name threads itself; else None.
static THREADING: PyOnceLock<Option<Py<PyModule>>> = PyOnceLock::new();

/// Names the calling thread after its `threading` name, once, where the
/// interpreter does not (see the module doc). Failures are ignored: a name
/// is a nicety, and the event is written either way.
pub(crate) fn name_this_thread(py: Python<'_>) {
    if CONSIDERED.get() {
        return;
    }
    CONSIDERED.set(true);
    let _ = give_threading_name(py);
}

fn give_threading_name(py: Python<'_>) -> PyResult<()> {
    let threading = THREADING.get_or_try_init(py, || -> PyResult<_> {
        // 3.14 calls the OS itself when a thread starts.
        let names_itself = py.version_info() >= (3, 14);
        Ok(if names_itself { None } else { Some(py.import("threading")?.unbind()) })
    })?;
    let Some(threading) = threading else { return Ok(()) };
    let threading = threading.bind(py);
    let current = threading.call_method0("current_thread")?;
    if current.is(&threading.call_method0("main_thread")?) {
        return Ok(());
    }
    let dummy = threading.getattr("_DummyThread")?.cast_into::<PyType>()?;
    if current.is_instance(&dummy)? {
        return Ok(());
    }
    let name: String = current.getattr("name")?.extract()?;
    // Off Linux nothing is ever traced, so this is never reached there.
    let _ = usertrace::set_current_thread_name(&name);
    Ok(())
}

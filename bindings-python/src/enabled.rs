//! `Tracepoint.enabled` as a bare C getter.
//!
//! `if tp.enabled:` is the one thing hot code runs while nobody traces, so it
//! must cost about an attribute read. A `#[getter]` goes through PyO3's
//! trampoline (panic guard, borrow check, conversion); this getter is the C
//! function CPython's `getset_descriptor` calls directly: one load of the
//! enable word the kernel writes, and `True` or `False`.
//!
//! # Safety
//! The descriptor is created for the `Tracepoint` type only, and CPython's
//! `getset_descriptor` checks `isinstance(obj, Tracepoint)` before it calls
//! the getter, so `obj` is always a live `Tracepoint`.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::ptr::null_mut;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::tracepoint::Tracepoint;

/// Whether a tracer is attached to `obj`'s tracepoint.
unsafe extern "C" fn get_enabled(obj: *mut ffi::PyObject, _closure: *mut c_void) -> *mut ffi::PyObject {
    // SAFETY: getters run with the GIL held ("attached"), and CPython's
    // descriptor has checked that `obj` is a Tracepoint (see module docs).
    let enabled = unsafe {
        let py = Python::assume_attached();
        match Borrowed::from_ptr_or_opt(py, obj) {
            Some(any) => any.cast_unchecked::<Tracepoint>().get().enabled(),
            None => false,
        }
    };
    // SAFETY: True and False are static objects; the getter returns a new
    // reference, as the C API requires.
    unsafe {
        let result = if enabled { ffi::Py_True() } else { ffi::Py_False() };
        ffi::Py_IncRef(result);
        result
    }
}

/// The descriptor's definition; CPython keeps a pointer to it for the life of
/// the type, so it is a `static`. Only read after creation.
struct GetSetDef(std::cell::UnsafeCell<ffi::PyGetSetDef>);
// SAFETY: written by no one after initialisation; CPython only reads it.
unsafe impl Sync for GetSetDef {}

static ENABLED: GetSetDef = GetSetDef(std::cell::UnsafeCell::new(ffi::PyGetSetDef {
    name: c"enabled".as_ptr(),
    get: Some(get_enabled),
    set: None,
    doc: c"True while a tracer (perf, ftrace, usertrace record) is attached. One load of the word the kernel writes."
        .as_ptr(),
    closure: null_mut(),
}));

/// Puts the `enabled` descriptor on the `Tracepoint` type.
pub(crate) fn install(ty: &Bound<'_, PyType>) -> PyResult<()> {
    // SAFETY: `ty` is a live type object, and ENABLED outlives it.
    let descr = unsafe {
        Bound::from_owned_ptr_or_err(ty.py(), ffi::PyDescr_NewGetSet(ty.as_type_ptr(), ENABLED.0.get()))?
    };
    ty.setattr("enabled", descr)
}

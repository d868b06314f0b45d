//! Methods taking `*args, **kwargs` through CPython's vectorcall convention
//! (`METH_FASTCALL | METH_KEYWORDS`): the values arrive as an array and
//! the keywords' names as a tuple, so a call builds no tuple and no dict.
//!
//! PyO3 gives such methods the tuple-and-dict convention under abi3-py39
//! (whose limited API lacks `METH_FASTCALL`): every `emit(a=1, b=2)` built
//! a dict, which PyO3 then copied into a second one. `METH_FASTCALL` and
//! its function type have been unchanged since Python 3.7 and joined the
//! limited API in 3.10 as they were, so the one abi3 wheel uses them on
//! every Python it supports (3.9 and later).
//!
//! # Safety
//! A method is installed (`install`) on the type of the class `T` its
//! trampoline was made for, and only there. CPython's method descriptor
//! checks `isinstance(self, T)` before it calls the function (the
//! "descriptor 'emit' for 'Tracepoint' objects doesn't apply" TypeError),
//! so `self` is always a live `T`.
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::null_mut;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use pyo3::PyClass;

/// `METH_FASTCALL` from CPython's methodobject.h, which pyo3-ffi declares
/// only for the limited API of 3.10 and later (see the module docs).
const METH_FASTCALL: c_int = 0x0080;

/// `PyCFunctionFastWithKeywords` (CPython's `_PyCFunctionFastWithKeywords`
/// before 3.13), which pyo3-ffi declares only where it declares the flag.
pub(crate) type FastFunction = unsafe extern "C" fn(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// The arguments of one vectorcall: borrowed from the caller, who holds
/// them for the duration of the call.
pub(crate) struct FastArgs<'a, 'py> {
    positional: &'a [*mut ffi::PyObject],
    /// The keywords' names (str), one per entry of `keyword_values`.
    names: Option<Borrowed<'a, 'py, PyTuple>>,
    keyword_values: &'a [*mut ffi::PyObject],
    py: Python<'py>,
}

impl<'a, 'py> FastArgs<'a, 'py> {
    /// # Safety
    /// `args` holds `nargs` positional values and then one value per entry
    /// of `kwnames` (a tuple, or null for none), all live for `'a`: the
    /// vectorcall protocol (PEP 590) guarantees this for the call's length.
    unsafe fn new(
        py: Python<'py>,
        args: *const *mut ffi::PyObject,
        nargs: ffi::Py_ssize_t,
        kwnames: *mut ffi::PyObject,
    ) -> PyResult<Self> {
        // SAFETY: kwnames is null or a tuple the caller holds (PEP 590).
        let names = unsafe { Borrowed::from_ptr_or_opt(py, kwnames).map(|n| n.cast_unchecked::<PyTuple>()) };
        let keywords = names.as_ref().map_or(0, |n| n.len());
        let Ok(nargs) = usize::try_from(nargs) else {
            return Err(PyTypeError::new_err("negative argument count"));
        };
        if nargs + keywords == 0 {
            // `args` may be null or dangling when there is nothing to read.
            return Ok(FastArgs { positional: &[], names, keyword_values: &[], py });
        }
        // SAFETY: `args` points at nargs + keywords live pointers (PEP 590).
        let all = unsafe { std::slice::from_raw_parts(args, nargs + keywords) };
        let (positional, keyword_values) = all.split_at(nargs);
        Ok(FastArgs { positional, names, keyword_values, py })
    }

    pub(crate) fn positional_len(&self) -> usize {
        self.positional.len()
    }

    /// The `i`th positional value (`i < positional_len()`).
    pub(crate) fn positional(&self, i: usize) -> Borrowed<'a, 'py, PyAny> {
        // SAFETY: a live object the caller holds for the call (see `new`).
        unsafe { Borrowed::from_ptr(self.py, self.positional[i]) }
    }

    /// The first positional value, and the call's other values; `None`
    /// for a call with no positional value.
    pub(crate) fn split_first(self) -> Option<(Borrowed<'a, 'py, PyAny>, FastArgs<'a, 'py>)> {
        let (first, rest) = self.positional.split_first()?;
        // SAFETY: a live object the caller holds for the call (see `new`).
        let first = unsafe { Borrowed::from_ptr(self.py, *first) };
        Some((first, FastArgs { positional: rest, ..self }))
    }

    pub(crate) fn keywords_len(&self) -> usize {
        self.keyword_values.len()
    }

    /// The `j`th keyword's name and value (`j < keywords_len()`).
    pub(crate) fn keyword(&self, j: usize) -> PyResult<(Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>)> {
        let Some(names) = self.names else { return Err(PyTypeError::new_err("keyword values without names")) };
        let j_ssize = ffi::Py_ssize_t::try_from(j).map_err(|e| PyTypeError::new_err(e.to_string()))?;
        // SAFETY: `names` is a live tuple; PyTuple_GetItem checks the index
        // and returns a reference borrowed from the tuple, which lives for 'a.
        let name = unsafe { Borrowed::from_ptr_or_err(self.py, ffi::PyTuple_GetItem(names.as_ptr(), j_ssize))? };
        // SAFETY: a live object the caller holds for the call (see `new`).
        Ok((name, unsafe { Borrowed::from_ptr(self.py, self.keyword_values[j]) }))
    }
}

/// The Rust side of a fast method of class `T`.
pub(crate) type Body<T> = for<'a, 'py> fn(&Bound<'py, T>, FastArgs<'a, 'py>) -> PyResult<Bound<'py, PyAny>>;

/// Runs `body` for a call of a fast method of class `T`: the panic
/// boundary, and the conversion of its result to what CPython expects.
///
/// # Safety
/// Called by CPython, attached, as the method `install`ed on `T`'s type:
/// `slf` is a live `T` (module docs), and the rest is a vectorcall's
/// arguments (`FastArgs::new`).
pub(crate) unsafe fn trampoline<T: PyClass>(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
    body: Body<T>,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls methods attached to the interpreter. PyO3's
    // attach count is not raised: what the bodies drop are `Bound`s, released
    // at once; a `Py` dropped here would have its release deferred to PyO3's
    // pool, which is still correct.
    let py = unsafe { Python::assume_attached() };
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: "`slf` is a live `T`" (module docs), borrowed for the call.
        let slf = unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<T>() };
        // SAFETY: "the rest is a vectorcall's arguments", the caller's for
        // the length of the call, as FastArgs::new needs.
        let call = unsafe { FastArgs::new(py, args, nargs, kwnames) }?;
        body(&slf, call)
    }));
    match result {
        Ok(Ok(value)) => value.into_ptr(),
        Ok(Err(err)) => {
            err.restore(py);
            null_mut()
        }
        Err(payload) => {
            // No panic crosses into CPython: it becomes PanicException, as
            // in every PyO3 method.
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic in a usertrace method".to_owned());
            PanicException::new_err(message).restore(py);
            null_mut()
        }
    }
}

/// A method's definition; CPython keeps a pointer to it for the life of the
/// type, so each is a `static`, only read after creation.
pub(crate) struct MethodDef(UnsafeCell<ffi::PyMethodDef>);

// SAFETY: written by no one after initialisation; CPython only reads it.
unsafe impl Sync for MethodDef {}

impl MethodDef {
    /// `doc` starts with the signature line (`name($self, /, *args, **kwargs)\n--\n\n`)
    /// from which CPython makes `__text_signature__`, as PyO3 does.
    pub(crate) const fn new(
        name: &'static CStr,
        doc: &'static CStr,
        function: FastFunction,
    ) -> Self {
        MethodDef(UnsafeCell::new(ffi::PyMethodDef {
            ml_name: name.as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                // SAFETY: C's cast of a method to PyCFunction: both are
                // function pointers, and METH_FASTCALL | METH_KEYWORDS makes
                // CPython call it with the fast signature it has.
                PyCFunction: unsafe {
                    std::mem::transmute::<FastFunction, ffi::PyCFunction>(function)
                },
            },
            ml_flags: METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: doc.as_ptr(),
        }))
    }

    /// The method's name, as Python sees it.
    fn name(&self) -> &'static CStr {
        // SAFETY: ml_name was set from a &'static CStr in `new`.
        unsafe { CStr::from_ptr((*self.0.get()).ml_name) }
    }
}

/// Puts `def` on the type `ty` as a method; `def`'s function must be a
/// `trampoline` for `ty`'s class (module docs).
pub(crate) fn install(ty: &Bound<'_, PyType>, def: &'static MethodDef) -> PyResult<()> {
    // SAFETY: `ty` is a live type object, and `def` (static) outlives it.
    let descr = unsafe {
        Bound::from_owned_ptr_or_err(ty.py(), ffi::PyDescr_NewMethod(ty.as_type_ptr(), def.0.get()))?
    };
    ty.setattr(def.name().to_str().map_err(|e| PyTypeError::new_err(e.to_string()))?, descr)
}

/// Declares `$function`, the C function of the fast method `$body` of class
/// `$class` (see `trampoline`). Its unsafe code is this module's, allowed
/// where the macro is used.
macro_rules! fast_method {
    ($function:ident, $class:ty, $body:path) => {
        #[allow(unsafe_code)]
        unsafe extern "C" fn $function(
            slf: *mut ::pyo3::ffi::PyObject,
            args: *const *mut ::pyo3::ffi::PyObject,
            nargs: ::pyo3::ffi::Py_ssize_t,
            kwnames: *mut ::pyo3::ffi::PyObject,
        ) -> *mut ::pyo3::ffi::PyObject {
            // SAFETY: CPython calls this as the method installed on $class's
            // type, with a vectorcall's arguments (see `trampoline`).
            unsafe { $crate::fastcall::trampoline::<$class>(slf, args, nargs, kwnames, $body) }
        }
    };
}
pub(crate) use fast_method;

//! A call's arguments matched to an event's fields and converted: values
//! by position, in field order, then by name.
//!
//! This runs on every enabled emit, so it allocates nothing for events of
//! up to `MAX_FIELDS` fields: the arguments and values live in arrays on
//! the stack, sized to the event (the compiler fills even an unused array,
//! so a 2-field event should not pay for 32 slots). A keyword is matched
//! to its field by comparing pointers with the field's interned name,
//! which is what a call site's keyword names are; other strings are
//! compared by value.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use usertrace::{Field, Value, MAX_FIELDS};

use crate::convert::{convert, Arg};
use crate::fastcall::FastArgs;

/// One event's fields, as the binding matches arguments to them.
pub(crate) struct Fields<'t> {
    pub(crate) event: &'t str,
    pub(crate) fields: &'t [Field],
    /// The fields' names, interned, in field order.
    pub(crate) names: &'t [Py<PyString>],
}

/// Why a keyword argument was refused.
enum Misplaced {
    Unknown,
    ByPosition,
    Twice,
}

impl Fields<'_> {
    /// Matches `call`'s arguments to the fields, converts them, and hands
    /// `f` the values, in field order.
    pub(crate) fn with_values<'py, R>(
        &self,
        call: &FastArgs<'_, 'py>,
        f: impl FnOnce(&[Value<'_>]) -> PyResult<R>,
    ) -> PyResult<R> {
        match self.fields.len() {
            0..=4 => self.bind::<4, R>(call, f),
            5..=8 => self.bind::<8, R>(call, f),
            _ => self.bind::<MAX_FIELDS, R>(call, f),
        }
    }

    fn bind<'py, const N: usize, R>(
        &self,
        call: &FastArgs<'_, 'py>,
        f: impl FnOnce(&[Value<'_>]) -> PyResult<R>,
    ) -> PyResult<R> {
        let (event, fields) = (self.event, self.fields);
        let positional = call.positional_len();
        if positional > fields.len() {
            return Err(PyTypeError::new_err(format!(
                "event {event} has {} fields ({}), but {} values were given",
                fields.len(),
                field_names(fields),
                positional
            )));
        }
        if fields.len() > N {
            // Unreachable: registration refuses more than MAX_FIELDS fields.
            return Err(PyTypeError::new_err(format!("event {event} has more than {MAX_FIELDS} fields")));
        }
        let mut given: [Option<Borrowed<'_, 'py, PyAny>>; N] = [None; N];
        for (i, slot) in given.iter_mut().enumerate().take(positional) {
            *slot = Some(call.positional(i));
        }
        // A refused keyword is reported after the fields' own errors, so a
        // call missing a field says so whatever else is wrong with it.
        let mut refused: Option<(Borrowed<'_, 'py, PyAny>, Misplaced)> = None;
        for j in 0..call.keywords_len() {
            let (key, value) = call.keyword(j)?;
            let why = match self.index_of(&key) {
                Some(i) if given[i].is_none() => {
                    given[i] = Some(value);
                    continue;
                }
                Some(i) if i < positional => Misplaced::ByPosition,
                Some(_) => Misplaced::Twice,
                None => Misplaced::Unknown,
            };
            refused.get_or_insert((key, why));
        }

        let mut args: [Option<Arg<'py>>; N] = [const { None }; N];
        for ((field, obj), arg) in fields.iter().zip(&given).zip(&mut args) {
            let Some(obj) = obj else {
                return Err(PyTypeError::new_err(format!(
                    "missing value for field {} of event {event} (fields: {})",
                    field.name,
                    field_names(fields)
                )));
            };
            *arg = Some(convert(event, field, obj)?);
        }
        if let Some((key, why)) = refused {
            let key: &Bound<'py, PyAny> = &key;
            return Err(PyTypeError::new_err(match why {
                Misplaced::Unknown => format!("event {event} has no field {key} (fields: {})", field_names(fields)),
                Misplaced::ByPosition => format!("field {key} of event {event} was given by position and by keyword"),
                Misplaced::Twice => format!("field {key} of event {event} was given twice by keyword"),
            }));
        }
        let mut values = [Value::U8(0); N];
        for (value, arg) in values.iter_mut().zip(args.iter().flatten()) {
            *value = arg.value();
        }
        f(&values[..fields.len()])
    }

    /// The field a keyword names, if any.
    fn index_of(&self, key: &Borrowed<'_, '_, PyAny>) -> Option<usize> {
        let by_identity = self.names.iter().position(|name| name.as_ptr() == key.as_ptr());
        by_identity.or_else(|| {
            // A name built at run time: compare the text (a failed comparison is no match).
            self.names.iter().position(|name| name.bind(key.py()).as_any().eq(&**key).unwrap_or(false))
        })
    }
}

/// `a, b, c`: the fields' names, for error messages.
pub(crate) fn field_names(fields: &[Field]) -> String {
    fields.iter().map(|f| f.name.as_ref()).collect::<Vec<_>>().join(", ")
}

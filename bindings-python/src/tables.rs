//! The core's code tables, as `(name, code)` pairs: `ERROR_KINDS`,
//! `FIELD_TYPES` and `AVAILABILITIES`. The typed Python enums are tested
//! against them, so neither side can be renumbered alone.

use pyo3::prelude::*;
use usertrace::{Availability, ErrorKind, FieldType};

pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let kinds: Vec<(&str, i32)> = ErrorKind::ALL.iter().map(|k| (k.name(), k.code())).collect();
    let types: Vec<(&str, u32)> = FieldType::TABLE.iter().map(|&(code, name)| (name, code)).collect();
    let availabilities: Vec<(&str, u32)> = Availability::ALL.iter().map(|a| (a.name(), a.code())).collect();
    m.add("ERROR_KINDS", pyo3::types::PyTuple::new(m.py(), kinds)?)?;
    m.add("FIELD_TYPES", pyo3::types::PyTuple::new(m.py(), types)?)?;
    m.add("AVAILABILITIES", pyo3::types::PyTuple::new(m.py(), availabilities)?)?;
    Ok(())
}

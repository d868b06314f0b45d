//! One record's values, as `tracing`'s [`Visit`] hands them over, and how
//! they are written into a tracepoint whose field types were fixed when it
//! was registered.
//!
//! # Types
//!
//! | `tracing` records | field type |
//! |-------------------|------------|
//! | `u8`…`u64`, `usize` (`record_u64`) | `u64` |
//! | `i8`…`i64`, `isize` (`record_i64`) | `i64` |
//! | `f32`, `f64` (`record_f64`) | `f64` |
//! | `bool` | `bool` |
//! | `&str`, `String`; `%x` and `?x` (Display, Debug); errors (their Display); `u128`, `i128` (decimal); the `message` | `str` |
//! | `&[u8]` | `bytes` |
//!
//! A callsite's tracepoint is registered with the types of its first
//! record; a field that record has no value for is a `str`. A later value
//! is written as the registered type when it is that type, or converts to
//! it exactly: an integer into the other integer type when in range, an
//! integer of at most 2^53 in magnitude into `f64`, anything into a `str`
//! (its text: decimal, `f64` as Rust's `{:?}`, `true`/`false`, bytes as
//! lowercase hex). A field without a value is written as 0, `false`, `""`
//! or no bytes. A record any of whose values does not fit (a string or a
//! float in an integer field, say) goes whole to the callsite's text twin,
//! `<name>_text`, registered at its first such record with every field as
//! `str`: the record is kept, under a name a pattern `<provider>_*` still
//! matches.
//!
//! Text is written as it is, but for a NUL, which the kernel's string
//! fields cannot hold: each becomes the two characters `\0`. A value's
//! text stops at the most an event can carry, and an event's strings and
//! bytes are cut (the longest first, to a common length, at a character
//! boundary) until the event fits the 8184 bytes perf records
//! ([`usertrace::wire::MAX_PAYLOAD_LEN`]), by the core's rule
//! ([`usertrace::fit_payload`]), which every bridge shares.

use std::cell::RefCell;
use std::fmt::{self, Write};
use std::ops::Range;

use tracing_core::field::{Field, Visit};
use usertrace::wire::MAX_PAYLOAD_LEN;
use usertrace::{FieldType, Value};

use crate::naming::truncate_at_char;

/// Fields one `tracing` callsite may have (its `FieldSet`'s limit).
pub(crate) const MAX_CALLSITE_FIELDS: usize = 32;

/// One field's value in the record being written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Slot {
    /// The record gave no value.
    Absent,
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    /// Bytes of [`Scratch::text`].
    Text(Range<usize>),
    /// Bytes of [`Scratch::bytes`].
    Bytes(Range<usize>),
}

impl Slot {
    /// The type a field is registered with when this is its first value.
    pub(crate) fn field_type(&self) -> FieldType {
        match self {
            Slot::U64(_) => FieldType::U64,
            Slot::I64(_) => FieldType::I64,
            Slot::F64(_) => FieldType::F64,
            Slot::Bool(_) => FieldType::Bool,
            Slot::Bytes(_) => FieldType::Bytes,
            Slot::Absent | Slot::Text(_) => FieldType::Str,
        }
    }
}

/// Where one record's values are gathered: reused by each thread, so a
/// record allocates only while its text outgrows what the thread's last
/// records needed.
#[derive(Debug)]
pub(crate) struct Scratch {
    pub(crate) slots: [Slot; MAX_CALLSITE_FIELDS],
    text: String,
    bytes: Vec<u8>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch { slots: std::array::from_fn(|_| Slot::Absent), text: String::new(), bytes: Vec::new() }
    }
}

/// A thread's scratch past this capacity is given back after its record.
const KEEP_CAPACITY: usize = 64 * 1024;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl Scratch {
    /// Runs `f` on this thread's scratch, emptied; on a fresh one if the
    /// thread's is in use (a value's `Debug` that itself logs).
    pub(crate) fn with<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
        let mut f = Some(f);
        let reused = SCRATCH.try_with(|cell| {
            let mut scratch = cell.try_borrow_mut().ok()?;
            scratch.clear();
            let result = (f.take().expect("called once"))(&mut scratch);
            if scratch.text.capacity() > KEEP_CAPACITY || scratch.bytes.capacity() > KEEP_CAPACITY {
                *scratch = Scratch::default();
            }
            Some(result)
        });
        match reused {
            Ok(Some(result)) => result,
            _ => (f.take().expect("not called yet"))(&mut Scratch::default()),
        }
    }

    fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = Slot::Absent);
        self.text.clear();
        self.bytes.clear();
    }

    /// Gathers the values `record` visits (a `ValueSet`, `Record` or
    /// `Event`'s `record`).
    pub(crate) fn visitor(&mut self) -> Collect<'_> {
        Collect { scratch: self }
    }

    fn set(&mut self, field: &Field, slot: Slot) {
        if let Some(s) = self.slots.get_mut(field.index()) {
            *s = slot;
        }
    }

    /// Appends text (NULs escaped, at most one event's worth) and returns
    /// where it lies.
    pub(crate) fn push_text(&mut self, write: impl FnOnce(&mut TextWriter<'_>) -> fmt::Result) -> Range<usize> {
        let start = self.text.len();
        let mut writer = TextWriter { out: &mut self.text, left: MAX_PAYLOAD_LEN };
        // An error is the writer's own stop at its limit, or a Debug impl's
        // failure: either way the text so far is the value.
        let _ = write(&mut writer);
        start..self.text.len()
    }

    /// Text that [`push_text`](Self::push_text) appended.
    pub(crate) fn text(&self, range: Range<usize>) -> &str {
        &self.text[range]
    }

    /// The text of slot `i`, made into a `Text` slot if it is not one.
    pub(crate) fn make_text(&mut self, i: usize) {
        let range = match self.slots[i].clone() {
            Slot::Text(_) => return,
            Slot::Absent => self.text.len()..self.text.len(),
            Slot::U64(v) => self.push_text(|w| write!(w, "{v}")),
            Slot::I64(v) => self.push_text(|w| write!(w, "{v}")),
            Slot::F64(v) => self.push_text(|w| write!(w, "{v:?}")),
            Slot::Bool(v) => self.push_text(|w| write!(w, "{v}")),
            Slot::Bytes(r) => {
                let bytes = std::mem::take(&mut self.bytes);
                let range = self.push_text(|w| bytes[r].iter().try_for_each(|b| write!(w, "{b:02x}")));
                self.bytes = bytes;
                range
            }
        };
        self.slots[i] = Slot::Text(range);
    }

    /// The value of slot `i` as a field of type `ty`, or `None` if it does
    /// not fit (see the [module](self) docs). A `str` field's slot must
    /// have been made text first ([`make_text`](Self::make_text)).
    pub(crate) fn value(&self, i: usize, ty: FieldType) -> Option<Value<'_>> {
        const EXACT_IN_F64: u64 = 1 << 53;
        Some(match (ty, &self.slots[i]) {
            (FieldType::U64, Slot::U64(v)) => Value::U64(*v),
            (FieldType::U64, Slot::I64(v)) => Value::U64(u64::try_from(*v).ok()?),
            (FieldType::I64, Slot::I64(v)) => Value::I64(*v),
            (FieldType::I64, Slot::U64(v)) => Value::I64(i64::try_from(*v).ok()?),
            (FieldType::F64, Slot::F64(v)) => Value::F64(*v),
            (FieldType::F64, Slot::U64(v)) if *v <= EXACT_IN_F64 => Value::F64(*v as f64),
            (FieldType::F64, Slot::I64(v)) if v.unsigned_abs() <= EXACT_IN_F64 => Value::F64(*v as f64),
            (FieldType::Bool, Slot::Bool(v)) => Value::Bool(*v),
            (FieldType::Str, Slot::Text(r)) => Value::Str(&self.text[r.clone()]),
            (FieldType::Bytes, Slot::Bytes(r)) => Value::Bytes(&self.bytes[r.clone()]),
            (FieldType::U64, Slot::Absent) => Value::U64(0),
            (FieldType::I64, Slot::Absent) => Value::I64(0),
            (FieldType::F64, Slot::Absent) => Value::F64(0.0),
            (FieldType::Bool, Slot::Absent) => Value::Bool(false),
            (FieldType::Str, Slot::Absent) => Value::Str(""),
            (FieldType::Bytes, Slot::Absent) => Value::Bytes(&[]),
            _ => return None,
        })
    }

    /// Whether every slot in `fields` fits its type in `types`, once the
    /// `str` ones are made text.
    pub(crate) fn fits(&self, fields: &[usize], types: &[FieldType]) -> bool {
        fields.iter().zip(types).all(|(&i, &ty)| ty == FieldType::Str || self.value(i, ty).is_some())
    }
}

/// Writes into the scratch's text: NULs become `\0`, and writing stops
/// (with an error, which ends a `Debug` impl's output) at `left` bytes.
pub(crate) struct TextWriter<'a> {
    out: &'a mut String,
    left: usize,
}

impl Write for TextWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut pieces = s.split('\0');
        let mut first = true;
        loop {
            let Some(piece) = pieces.next() else { return Ok(()) };
            if !first {
                self.push(r"\0")?;
            }
            first = false;
            self.push(piece)?;
        }
    }
}

impl TextWriter<'_> {
    fn push(&mut self, s: &str) -> fmt::Result {
        let kept = truncate_at_char(s, self.left);
        self.out.push_str(kept);
        self.left -= kept.len();
        if kept.len() < s.len() {
            return Err(fmt::Error);
        }
        Ok(())
    }
}

/// The [`Visit`]or that fills a [`Scratch`].
pub(crate) struct Collect<'s> {
    scratch: &'s mut Scratch,
}

impl Visit for Collect<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.scratch.set(field, Slot::F64(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.scratch.set(field, Slot::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.scratch.set(field, Slot::U64(value));
    }

    fn record_i128(&mut self, field: &Field, value: i128) {
        let range = self.scratch.push_text(|w| write!(w, "{value}"));
        self.scratch.set(field, Slot::Text(range));
    }

    fn record_u128(&mut self, field: &Field, value: u128) {
        let range = self.scratch.push_text(|w| write!(w, "{value}"));
        self.scratch.set(field, Slot::Text(range));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.scratch.set(field, Slot::Bool(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        let range = self.scratch.push_text(|w| w.write_str(value));
        self.scratch.set(field, Slot::Text(range));
    }

    fn record_bytes(&mut self, field: &Field, value: &[u8]) {
        let start = self.scratch.bytes.len();
        self.scratch.bytes.extend_from_slice(&value[..value.len().min(MAX_PAYLOAD_LEN)]);
        let end = self.scratch.bytes.len();
        self.scratch.set(field, Slot::Bytes(start..end));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let range = self.scratch.push_text(|w| write!(w, "{value}"));
        self.scratch.set(field, Slot::Text(range));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let range = self.scratch.push_text(|w| write!(w, "{value:?}"));
        self.scratch.set(field, Slot::Text(range));
    }
}

#[cfg(test)]
mod tests;

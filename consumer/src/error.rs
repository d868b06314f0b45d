//! What can go wrong while reading events, typed so callers can react.
//!
//! Parsing errors ([`FormatError`], [`DecodeError`], [`RecordError`],
//! [`RingError`]) are small `Copy` values: bad input from the kernel or a
//! file is reported, never a panic. [`Error`] is what a session returns.

use std::fmt;
use std::path::PathBuf;

use usertrace::Errno;

/// A `format` file of tracefs could not be understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatError {
    /// No `ID:` line, or one that is not a number.
    MissingId,
    /// No `name:` line.
    MissingName,
    /// A `field:` line (1-based line number) lacks a part or has a bad number.
    BadField {
        /// The 1-based line number.
        line: usize,
    },
    /// A field's offset + size overflows.
    FieldOutOfRange {
        /// The 1-based line number.
        line: usize,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::MissingId => write!(f, "event format has no numeric ID line"),
            FormatError::MissingName => write!(f, "event format has no name line"),
            FormatError::BadField { line } => write!(f, "event format line {line}: malformed field"),
            FormatError::FieldOutOfRange { line } => write!(f, "event format line {line}: field offset/size overflow"),
        }
    }
}

impl std::error::Error for FormatError {}

/// A raw event payload does not match its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The fixed part of field `index` lies beyond the `len` bytes recorded.
    Truncated {
        /// The field's index in [`EventFormat::fields`](crate::EventFormat::fields).
        field: usize,
        /// The length of the record.
        len: usize,
    },
    /// A `__data_loc`/`__rel_loc` word of field `index` points outside the record.
    BadLocation {
        /// The field's index in [`EventFormat::fields`](crate::EventFormat::fields).
        field: usize,
    },
    /// An EventHeader payload that `tracepoint_decode` could not walk.
    EventHeader {
        /// What was wrong with it.
        error: EventHeaderError,
        /// Where in the raw record (`trace_entry` included) the walk stopped.
        at: usize,
    },
}

/// Why an EventHeader payload could not be decoded: the kinds of
/// `tracepoint_decode`'s `EventHeaderEnumeratorError` that a payload can cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventHeaderError {
    /// Shorter than the 8-byte header, or a tracepoint name of 256 bytes or more.
    InvalidParameter,
    /// Not laid out by the EventHeader rules: unknown header flags or
    /// encoding, or a tracepoint name without `_L<level>K<keyword>`.
    NotSupported,
    /// A length or offset runs past the end, or metadata is cut.
    InvalidData,
    /// More items than the decoder walks in one event (4096).
    ImplementationLimit,
    /// Structs nested deeper than 8.
    StackOverflow,
}

impl fmt::Display for EventHeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EventHeaderError::InvalidParameter => "too short for an EventHeader, or its tracepoint name too long",
            EventHeaderError::NotSupported => "not laid out as EventHeader (unknown flags, encoding or name)",
            EventHeaderError::InvalidData => "a length or offset runs past the end of the payload",
            EventHeaderError::ImplementationLimit => "more than 4096 items",
            EventHeaderError::StackOverflow => "structs nested deeper than 8",
        })
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { field, len } => {
                write!(f, "event payload of {len} bytes is too short for field #{field}")
            }
            DecodeError::BadLocation { field } => write!(f, "field #{field} points outside the event payload"),
            DecodeError::EventHeader { error, at } => write!(f, "undecodable EventHeader event at byte {at}: {error}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// A perf record is shorter than its type requires, or inconsistent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordError {
    /// Fewer than the 8 header bytes.
    NoHeader,
    /// The header's size disagrees with the bytes given.
    SizeMismatch {
        /// The size in the header.
        header: usize,
        /// The number of bytes given.
        actual: usize,
    },
    /// A record of `kind` needs more bytes than it has.
    Truncated {
        /// The record's `PERF_RECORD_*` type.
        kind: u32,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::NoHeader => write!(f, "perf record shorter than its header"),
            RecordError::SizeMismatch { header, actual } => {
                write!(f, "perf record header says {header} bytes but {actual} are present")
            }
            RecordError::Truncated { kind } => write!(f, "perf record of type {kind} is truncated"),
        }
    }
}

impl std::error::Error for RecordError {}

/// The ring's head/tail or a record header is impossible: the reader stops
/// rather than read garbage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingError {
    /// head is behind tail, or further ahead than the ring is large.
    BadHead {
        /// `data_head`, as the kernel published it.
        head: u64,
        /// `data_tail`, as the reader left it.
        tail: u64,
    },
    /// A record header of `size` bytes at `offset` is smaller than a header or
    /// runs past head.
    BadRecordSize {
        /// The record's position in the ring.
        offset: u64,
        /// The size its header gives.
        size: u16,
    },
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingError::BadHead { head, tail } => write!(f, "perf ring head {head} inconsistent with tail {tail}"),
            RingError::BadRecordSize { offset, size } => {
                write!(f, "perf ring record at {offset} has impossible size {size}")
            }
        }
    }
}

impl std::error::Error for RingError {}

/// Why a recording session could not start or go on.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// tracefs or user_events is missing; the status says what to do.
    Unavailable(Box<usertrace::Status>),
    /// An `-e` pattern is empty or has characters no event name can contain.
    BadPattern(usertrace::PatternError),
    /// No `-e` pattern was given, so nothing would be recorded.
    NoPatterns,
    /// An exact event name matched nothing in tracefs.
    UnknownEvent {
        /// The name as given.
        name: String,
    },
    /// perf_event_open or its ioctls were refused for lack of privilege.
    PermissionDenied {
        /// The call refused.
        op: &'static str,
        /// `EACCES` or `EPERM`.
        errno: Errno,
    },
    /// A perf call failed for another reason.
    Perf {
        /// The call that failed.
        op: &'static str,
        /// The CPU it was made for.
        cpu: u32,
        /// What the kernel returned.
        errno: Errno,
    },
    /// Reading tracefs, /proc or sysfs failed.
    Io {
        /// The file or directory read.
        path: PathBuf,
        /// Why it failed.
        error: std::io::Error,
    },
    /// A tracefs `format` file could not be parsed.
    Format {
        /// The format file.
        path: PathBuf,
        /// What is wrong in it.
        error: FormatError,
    },
    /// The kernel's ring buffer held something impossible.
    Ring {
        /// The CPU whose ring it is.
        cpu: u32,
        /// What is wrong.
        error: RingError,
    },
    /// Stacks were asked of a flight recorder, whose window does not keep
    /// them yet.
    StacksWithFlight,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unavailable(status) => write!(f, "{status} (see `usertrace status`)"),
            Error::BadPattern(error) => write!(f, "{error}"),
            Error::NoPatterns => write!(f, "no event pattern was given: name events with -e NAME or -e 'PREFIX_*'"),
            Error::UnknownEvent { name } => {
                write!(f, "no user event matches \"{}\"; `usertrace list` shows the registered ones", name.escape_debug())
            }
            Error::PermissionDenied { op, errno } => write!(
                f,
                "{op} failed: {errno}; recording every CPU needs root or CAP_PERFMON, or \
                 `sysctl kernel.perf_event_paranoid=-1`"
            ),
            Error::Perf { op, cpu, errno } => write!(f, "{op} on CPU {cpu} failed: {errno}"),
            Error::Io { path, error } => write!(f, "{}: {error}", path.display()),
            Error::Format { path, error } => write!(f, "{}: the event's format cannot be parsed: {error}", path.display()),
            Error::Ring { cpu, error } => write!(f, "CPU {cpu}: {error}"),
            Error::StacksWithFlight => {
                write!(f, "a flight recorder does not record stacks yet: record them into a perf.data file (SessionOptions::archive) instead")
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<usertrace::PatternError> for Error {
    fn from(error: usertrace::PatternError) -> Self {
        Error::BadPattern(error)
    }
}

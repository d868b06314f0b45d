//! The one error type of the crate, and the stable codes every binding shares.

use std::fmt;

use crate::status::Status;
use crate::errno::Errno;

/// A stable, binding-independent classification of [`Error`].
///
/// The numbers are part of the C, Python and Java APIs: never renumber.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
#[non_exhaustive]
pub enum ErrorKind {
    /// user_events cannot be used here; see [`crate::status()`].
    Unavailable = 1,
    /// An event, provider or field name is not `[A-Za-z0-9_]+`.
    InvalidName = 2,
    /// A `char[N]` too large, or a format over 511 bytes.
    InvalidFormat = 3,
    /// The name is registered with different fields.
    FieldsMismatch = 4,
    /// A value does not fit the field it was given for.
    ValueMismatch = 5,
    /// The event would exceed what perf can record.
    PayloadTooLarge = 6,
    /// The kernel's limit on user events (`kernel.user_events_max`) is reached.
    TooManyEvents = 7,
    /// The operation needs a privilege (e.g. CAP_PERFMON for persist/delete).
    PermissionDenied = 8,
    /// No event of that name exists.
    UnknownEvent = 9,
    /// The event is still registered by some process.
    EventBusy = 10,
    /// The kernel refused for another reason; the message carries errno.
    Kernel = 11,
    /// Two fields of one event have the same name.
    DuplicateField = 12,
    /// An event declares more than [`MAX_FIELDS`](crate::MAX_FIELDS) fields.
    TooManyFields = 13,
    /// A `char[0]` field, which can hold nothing.
    EmptyCharArray = 14,
    /// A field type that is not one of [`FieldType`](crate::FieldType)'s.
    UnknownFieldType = 15,
}

impl ErrorKind {
    /// Every kind, in code order: the one table the bindings are held to.
    pub const ALL: [ErrorKind; 15] = [
        ErrorKind::Unavailable,
        ErrorKind::InvalidName,
        ErrorKind::InvalidFormat,
        ErrorKind::FieldsMismatch,
        ErrorKind::ValueMismatch,
        ErrorKind::PayloadTooLarge,
        ErrorKind::TooManyEvents,
        ErrorKind::PermissionDenied,
        ErrorKind::UnknownEvent,
        ErrorKind::EventBusy,
        ErrorKind::Kernel,
        ErrorKind::DuplicateField,
        ErrorKind::TooManyFields,
        ErrorKind::EmptyCharArray,
        ErrorKind::UnknownFieldType,
    ];

    /// The stable number (1 and up) of this kind.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The kind with number `code`, if there is one.
    pub fn from_code(code: i32) -> Option<ErrorKind> {
        Self::ALL.iter().copied().find(|k| k.code() == code)
    }

    /// The constant's name in the bindings: `INVALID_NAME` for
    /// `ErrorKind::InvalidName` (C prefixes `USERTRACE_ERR_`).
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Unavailable => "UNAVAILABLE",
            ErrorKind::InvalidName => "INVALID_NAME",
            ErrorKind::InvalidFormat => "INVALID_FORMAT",
            ErrorKind::FieldsMismatch => "FIELDS_MISMATCH",
            ErrorKind::ValueMismatch => "VALUE_MISMATCH",
            ErrorKind::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            ErrorKind::TooManyEvents => "TOO_MANY_EVENTS",
            ErrorKind::PermissionDenied => "PERMISSION_DENIED",
            ErrorKind::UnknownEvent => "UNKNOWN_EVENT",
            ErrorKind::EventBusy => "EVENT_BUSY",
            ErrorKind::Kernel => "KERNEL",
            ErrorKind::DuplicateField => "DUPLICATE_FIELD",
            ErrorKind::TooManyFields => "TOO_MANY_FIELDS",
            ErrorKind::EmptyCharArray => "EMPTY_CHAR_ARRAY",
            ErrorKind::UnknownFieldType => "UNKNOWN_FIELD_TYPE",
        }
    }
}

/// Everything that can go wrong, with what to do about it in the message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// user_events cannot be used here; the status says why.
    Unavailable(Box<Status>),
    /// A name is not `[A-Za-z0-9_]+`.
    InvalidName {
        /// What the name is of: `"provider"`, `"event"`, `"field"`, or `"span"`
        /// (a span name with no letter, digit or `_` to make an event name of).
        what: &'static str,
        /// The name as given.
        name: String,
    },
    /// An event declares more than [`MAX_FIELDS`](crate::MAX_FIELDS) fields.
    TooManyFields {
        /// The event's name.
        event: String,
        /// How many fields it declares.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// Two fields of one event have the same name.
    DuplicateField {
        /// The event's name.
        event: String,
        /// The repeated field name.
        field: String,
    },
    /// A `char[0]` field, which can hold nothing.
    EmptyCharArray {
        /// The event's name.
        event: String,
        /// The field's name.
        field: String,
    },
    /// A field type not among [`FieldType`](crate::FieldType)'s.
    UnknownFieldType {
        /// The event's name.
        event: String,
        /// The field's name.
        field: String,
        /// The type as given.
        given: String,
    },
    /// A `char[N]` field larger than the kernel accepts.
    CharArrayTooLarge {
        /// The event's name.
        event: String,
        /// The field's name.
        field: String,
        /// The `N` given.
        len: usize,
        /// The largest `N` the kernel accepts.
        max: usize,
    },
    /// The `name field;field` string is longer than the kernel accepts.
    FormatTooLong {
        /// The event's name.
        event: String,
        /// The string's length in bytes.
        len: usize,
        /// The kernel's limit.
        max: usize,
    },
    /// The name is already registered with other fields (kernel `EADDRINUSE`).
    FieldsMismatch {
        /// The event's name.
        event: String,
        /// The format this registration asked for.
        ours: String,
        /// The format already registered, when tracefs is readable.
        registered: Option<String>,
    },
    /// A dynamic emit gave more or fewer values than the event has fields.
    ValueCount {
        /// The event's name.
        event: String,
        /// The number of fields.
        expected: usize,
        /// The number of values.
        got: usize,
    },
    /// A value of the wrong type for its field.
    ValueMismatch {
        /// The event's name.
        event: String,
        /// The field's name.
        field: String,
        /// The field's type.
        expected: &'static str,
        /// The value's type.
        got: &'static str,
    },
    /// A value longer than its `char[N]` field.
    ValueTooLong {
        /// The event's name.
        event: String,
        /// The field's name.
        field: String,
        /// The value's length in bytes.
        len: usize,
        /// The field's `N`.
        max: usize,
    },
    /// A string with a NUL inside, which readers would cut short.
    InteriorNul {
        /// The event's name.
        event: String,
        /// The field's name.
        field: String,
    },
    /// The payload exceeds what perf records; nothing was written.
    PayloadTooLarge {
        /// The event's name.
        event: String,
        /// The payload's length in bytes.
        len: usize,
        /// The largest payload perf records.
        max: usize,
    },
    /// The kernel's limit on user events is reached (kernel `EMFILE`).
    TooManyEvents {
        /// The event's name.
        event: String,
    },
    /// The operation needs CAP_PERFMON or root.
    PermissionDenied {
        /// What was refused: `"registration"` or `"deletion"`.
        op: &'static str,
        /// The event's name.
        event: String,
    },
    /// No user event of that name exists.
    UnknownEvent {
        /// The event's name.
        event: String,
    },
    /// The event is still registered or traced somewhere.
    EventBusy {
        /// The event's name.
        event: String,
    },
    /// Any other errno from the kernel.
    Kernel {
        /// What failed: `"registration"`, `"unregistration"`, `"write"` or `"deletion"`.
        op: &'static str,
        /// The event's name.
        event: String,
        /// What the kernel returned.
        errno: Errno,
    },
    /// An environment variable has a value this crate does not accept
    /// (kind [`ErrorKind::Unavailable`]: tracing cannot start as configured).
    InvalidSetting {
        /// The variable, e.g. `USERTRACE_TRANSPORT`.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What it may be.
        allowed: &'static str,
    },
    /// A shared-memory file or its directory could not be made or mapped
    /// (kind [`ErrorKind::Kernel`]).
    SharedMemory {
        /// What failed, e.g. `"create"`, `"mmap"`.
        op: &'static str,
        /// The file or directory.
        path: String,
        /// What the system returned.
        errno: Errno,
    },
    /// The shared-memory directory exists but is not safe to use: not a
    /// directory, another user's, or open to group or others (kind
    /// [`ErrorKind::PermissionDenied`]).
    UnsafeDirectory {
        /// The directory.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A live recorder held the tracepoint's slot past the wait, so the
    /// enable word stays registered and must not be freed (kind
    /// [`ErrorKind::EventBusy`]).
    UnregistrationTimedOut {
        /// The event's name.
        event: String,
        /// The recorder's pid.
        recorder: u32,
        /// How long unregistration waited, in milliseconds.
        waited_ms: u64,
    },
}

impl Error {
    /// The stable classification of this error, for bindings and for
    /// matching without depending on the variant's fields.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Unavailable(_) => ErrorKind::Unavailable,
            Error::InvalidName { .. } => ErrorKind::InvalidName,
            Error::CharArrayTooLarge { .. } | Error::FormatTooLong { .. } => ErrorKind::InvalidFormat,
            Error::TooManyFields { .. } => ErrorKind::TooManyFields,
            Error::DuplicateField { .. } => ErrorKind::DuplicateField,
            Error::EmptyCharArray { .. } => ErrorKind::EmptyCharArray,
            Error::UnknownFieldType { .. } => ErrorKind::UnknownFieldType,
            Error::FieldsMismatch { .. } => ErrorKind::FieldsMismatch,
            Error::ValueCount { .. }
            | Error::ValueMismatch { .. }
            | Error::ValueTooLong { .. }
            | Error::InteriorNul { .. } => ErrorKind::ValueMismatch,
            Error::PayloadTooLarge { .. } => ErrorKind::PayloadTooLarge,
            Error::TooManyEvents { .. } => ErrorKind::TooManyEvents,
            Error::PermissionDenied { .. } => ErrorKind::PermissionDenied,
            Error::UnknownEvent { .. } => ErrorKind::UnknownEvent,
            Error::EventBusy { .. } => ErrorKind::EventBusy,
            Error::Kernel { .. } => ErrorKind::Kernel,
            // Existing kinds, so that the bindings' one table stays as it is.
            Error::InvalidSetting { .. } => ErrorKind::Unavailable,
            Error::SharedMemory { .. } => ErrorKind::Kernel,
            Error::UnsafeDirectory { .. } => ErrorKind::PermissionDenied,
            Error::UnregistrationTimedOut { .. } => ErrorKind::EventBusy,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unavailable(status) => write!(f, "{status} (see `usertrace status`)"),
            Error::InvalidName { what, name } => write!(
                f,
                "invalid {what} name \"{}\": use only ASCII letters, digits and '_' \
                 (':' and spaces have meaning to the kernel)",
                name.escape_debug()
            ),
            Error::TooManyFields { event, count, max } => {
                write!(f, "event {event} declares {count} fields; at most {max} are supported: split it into several events")
            }
            Error::DuplicateField { event, field } => {
                write!(f, "event {event} declares field {field} twice; give each field its own name")
            }
            Error::EmptyCharArray { event, field } => write!(
                f,
                "field {field} of event {event} is char[0], which holds nothing: use char[N] with N from 1 to 1024, \
                 or a string field"
            ),
            Error::UnknownFieldType { event, field, given } => write!(
                f,
                "field {field} of event {event} has unknown type {given}; use one of u8, u16, u32, u64, i8, i16, \
                 i32, i64, bool, f32, f64, str, bytes, char[N]"
            ),
            Error::CharArrayTooLarge { event, field, len, max } => {
                write!(f, "field {field} of event {event} is char[{len}]; the kernel allows at most char[{max}]")
            }
            Error::FormatTooLong { event, len, max } => write!(
                f,
                "the format of event {event} is {len} bytes; the kernel allows {max}: use fewer or shorter field names"
            ),
            Error::FieldsMismatch { event, ours, registered } => match registered {
                Some(theirs) => write!(
                    f,
                    "event {event} is already registered with different fields: registered \"{theirs}\", \
                     this one \"{ours}\"; rename the event or use the multi-format option"
                ),
                None => write!(
                    f,
                    "event {event} is already registered with different fields (this one \"{ours}\"); \
                     rename the event or use the multi-format option"
                ),
            },
            Error::ValueCount { event, expected, got } => {
                write!(f, "event {event} has {expected} fields but {got} values were given")
            }
            Error::ValueMismatch { event, field, expected, got } => {
                write!(f, "field {field} of event {event} is {expected}, but a {got} was given")
            }
            Error::ValueTooLong { event, field, len, max } => {
                write!(f, "field {field} of event {event} holds {max} bytes, but the value has {len}")
            }
            Error::InteriorNul { event, field } => write!(
                f,
                "field {field} of event {event} got a string with a NUL byte inside, which readers would cut \
                 short; use a bytes field for binary data"
            ),
            Error::PayloadTooLarge { event, len, max } => write!(
                f,
                "event {event} would carry {len} bytes; perf records at most {max} per event, so it was not written"
            ),
            Error::TooManyEvents { event } => write!(
                f,
                "cannot register {event}: the kernel's limit of user events is reached \
                 (raise sysctl kernel.user_events_max, or unregister events)"
            ),
            Error::PermissionDenied { op, event } => {
                write!(f, "{op} of event {event} needs CAP_PERFMON (or root)")
            }
            Error::UnknownEvent { event } => write!(f, "no user event named {event} exists"),
            Error::EventBusy { event } => {
                write!(f, "event {event} is still registered or traced; unregister it everywhere first")
            }
            Error::Kernel { op, event, errno } => write!(f, "{op} of event {event} failed: {errno}"),
            Error::InvalidSetting { variable, value, allowed } => {
                write!(f, "{variable}={} is not valid; use {allowed}, or unset it", value.escape_debug())
            }
            Error::SharedMemory { op, path, errno } => write!(f, "shared-memory transport: {op} {path} failed: {errno}"),
            Error::UnsafeDirectory { path, reason } => write!(
                f,
                "shared-memory transport: {path} {reason}; it must be a directory of this user with mode 0700 \
                 (remove it, or set USERTRACE_TRANSPORT=user_events)"
            ),
            Error::UnregistrationTimedOut { event, recorder, waited_ms } => write!(
                f,
                "unregistration of event {event}: recorder {recorder} held its enable word for over {waited_ms} ms; \
                 the word stays registered and is never freed"
            ),
        }
    }
}

impl std::error::Error for Error {}

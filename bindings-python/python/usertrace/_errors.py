"""The exception of usertrace, and the error codes every binding shares."""

from __future__ import annotations

import enum
from typing import Optional

__all__ = ["ErrorKind", "UsertraceError"]


class ErrorKind(enum.IntEnum):
    """Why an operation failed. The numbers are those of the Rust core, the C
    header and the Java binding: they never change. (A test holds this enum
    to the core's table, ``usertrace._native.ERROR_KINDS``.)"""

    UNAVAILABLE = 1
    """user_events cannot be used here; ``usertrace.status()`` says why."""
    INVALID_NAME = 2
    """A provider, event or field name is not ``[A-Za-z0-9_]+``."""
    INVALID_FORMAT = 3
    """A ``char[N]`` too large, or a format over 511 bytes."""
    FIELDS_MISMATCH = 4
    """The event name is already registered with different fields."""
    VALUE_MISMATCH = 5
    """A value does not fit its field."""
    PAYLOAD_TOO_LARGE = 6
    """The event would exceed what perf can record (8 KiB)."""
    TOO_MANY_EVENTS = 7
    """The kernel's limit of user events (``kernel.user_events_max``) is reached."""
    PERMISSION_DENIED = 8
    """The operation needs a privilege (CAP_PERFMON for ``persist``)."""
    UNKNOWN_EVENT = 9
    """No event of that name exists."""
    EVENT_BUSY = 10
    """The event is still registered by some process."""
    KERNEL = 11
    """The kernel refused for another reason; ``errno`` says which."""
    DUPLICATE_FIELD = 12
    """Two fields of one event have the same name."""
    TOO_MANY_FIELDS = 13
    """An event declares more than ``MAX_FIELDS`` fields."""
    EMPTY_CHAR_ARRAY = 14
    """A ``char[0]`` field, which can hold nothing."""
    UNKNOWN_FIELD_TYPE = 15
    """A field type that is none of ``u8`` .. ``bytes``, ``char[N]``."""


class UsertraceError(OSError):
    """A failure of the usertrace core. ``kind`` classifies it; ``errno`` is
    the kernel's error number when there is one, else None."""

    kind: ErrorKind

    def __init__(self, message: str, kind: int, errno: Optional[int] = None) -> None:
        super().__init__(message)
        try:
            self.kind = ErrorKind(kind)
        except ValueError:  # a code from a newer core
            self.kind = ErrorKind.KERNEL
        self.errno = errno

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[type[UsertraceError], tuple[str, int, Optional[int]]]:
        return (type(self), (str(self), int(self.kind), self.errno))

"""``status()``: why user_events is, or is not, available in this process."""

from __future__ import annotations

import dataclasses
import enum
from typing import Optional, Tuple

from . import _native

__all__ = ["Availability", "Status", "status"]


class Availability(str, enum.Enum):
    """The verdict of a probe of tracefs and ``user_events_data``, by the
    core's names (a test holds it to ``usertrace._native.AVAILABILITIES``)."""

    AVAILABLE = "available"
    TRACEFS_NOT_MOUNTED = "tracefs_not_mounted"
    USER_EVENTS_MISSING = "user_events_missing"
    PERMISSION_DENIED = "permission_denied"
    OPEN_FAILED = "open_failed"


@dataclasses.dataclass(frozen=True)
class Status:
    """What ``status()`` found. ``str(status)`` is a sentence saying what to
    do about it."""

    availability: Availability
    tracefs: Optional[str]
    """The tracefs mount point in use, if one was found."""
    tried: Tuple[str, ...]
    """The mount points looked at, in order."""
    errno: Optional[int]
    """The errno of a failed open of ``user_events_data``."""
    message: str

    @property
    def available(self) -> bool:
        return self.availability is Availability.AVAILABLE

    def __bool__(self) -> bool:
        return self.available

    def __str__(self) -> str:
        return self.message


def status() -> Status:
    """Probes tracefs and ``user_events_data`` now (never cached), and when
    that cannot tell why there are no user_events, reads the kernel's build
    config: the core's verdict, word for word what ``usertrace status`` says.

    This is about user_events only. Where the kernel has none, events still
    reach ``usertrace record`` through shared memory: ``transport()`` says
    which way this process's events go, and so whether they will reach a
    recorder."""
    availability, tracefs, tried, errno, message = _native.status()
    return Status(Availability(availability), tracefs, tuple(tried), errno, message)

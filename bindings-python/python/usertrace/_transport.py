"""``transport()``: which way this process's events leave it, and so whether
they reach a recorder; the rule is the core's (``usertrace::transport()``)."""

from __future__ import annotations

import dataclasses
import enum

from . import _native

__all__ = ["Transport", "TransportChoice", "transport"]


class Transport(str, enum.Enum):
    """A way for events to reach a recorder, by the names
    ``USERTRACE_TRANSPORT`` gives them."""

    USER_EVENTS = "user_events"
    """The kernel's user_events: one ``writev`` into the trace buffers."""
    SHM = "shm"
    """Shared memory in ``/dev/shm``, read by ``usertrace record``, on any kernel."""


@dataclasses.dataclass(frozen=True)
class TransportChoice:
    """What ``transport()`` found. ``str(choice)`` is the core's sentence,
    ``transport shm: USERTRACE_TRANSPORT=auto: ...``."""

    kind: Transport
    reason: str
    """Why, in a sentence: the setting, and for ``auto`` what the probe found."""
    message: str

    def __str__(self) -> str:
        return self.message


def transport() -> TransportChoice:
    """The transport this process's tracepoints use (or the next one
    registered would), and why.

    ``USERTRACE_TRANSPORT`` (read once per process) picks it: ``user_events``
    or ``shm`` forces one; ``auto`` (or unset) takes user_events where
    ``status()`` finds them usable, and shared memory where the kernel has
    none (no tracefs, or no CONFIG_USER_EVENTS). Once a tracepoint
    registered, the process keeps its transport.

    Raises ``UsertraceError`` (kind ``UNAVAILABLE``) if
    ``USERTRACE_TRANSPORT`` holds anything else: then nothing registers.
    """
    kind, reason, message = _native.transport()
    return TransportChoice(Transport(kind), reason, message)

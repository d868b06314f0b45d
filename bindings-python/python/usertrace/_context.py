"""The current trace context, in a ``contextvars.ContextVar``: what a span
begun now is the child of, in this thread or this asyncio task.

A request handler makes the incoming context current; ``traced`` spans
inside it continue the caller's trace, and ``inject`` hands the innermost
span's context to the next service::

    with usertrace.use_context(usertrace.extract(request.headers)):
        with usertrace.traced("handle"):
            headers = {}
            usertrace.inject(headers)        # traceparent of "handle"
            urllib.request.urlopen(urllib.request.Request(url, headers=headers))

While nobody records a span, it changes nothing here: the context current
around it stays current inside it, so ``inject`` passes the caller's
context on unchanged, as OpenTelemetry's non-recording spans do, and a
service nobody records does not cut the trace.

The rules for reading and writing the headers are the core's
(``TraceContext``): a malformed ``traceparent`` is no context, never an
exception in the request's path.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any, Iterator, Optional

from ._native import TraceContext

__all__ = ["TraceContext", "current_context", "extract", "inject", "use_context"]

_current: ContextVar[Optional[TraceContext]] = ContextVar("usertrace_trace_context", default=None)


def current_context() -> Optional[TraceContext]:
    """The context a span begun now continues: the innermost recorded
    ``traced`` span's, else the one ``use_context`` made current; None
    outside both (a span begun then starts a new trace)."""
    return _current.get()


@contextlib.contextmanager
def use_context(context: Optional[TraceContext]) -> Iterator[Optional[TraceContext]]:
    """Makes ``context`` (say, ``extract(request.headers)``) current for
    the block; None leaves the block with no current context (its first
    span starts a new trace)."""
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


def extract(headers: Any) -> Optional[TraceContext]:
    """The context of a request's headers (any mapping with ``items()``),
    or None without a valid ``traceparent``."""
    return TraceContext.extract(headers)


def inject(headers: Any) -> None:
    """Writes the current context's ``traceparent`` (and ``tracestate``)
    into ``headers`` for an outgoing request; nothing without one."""
    context = _current.get()
    if context is not None:
        context.inject(headers)

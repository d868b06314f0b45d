"""A ``logging`` handler that writes each record as a user_events event.

``Handler`` checks its tracepoint first: while no tracer is attached it does
no formatting, takes no lock and returns. When one is, it emits
``<provider>_log`` with the fields ``logger`` (str), ``level`` (i32, e.g. 10
for DEBUG), ``message`` (the record's ``getMessage()``: arguments merged, no
formatter), ``file`` (path), ``line`` (u32) and ``thread`` (the thread's
name, str). The process and thread ids are in every event's header already.
"""

from __future__ import annotations

import logging
from typing import Optional, Union

from ._native import Tracepoint
from ._provider import Provider, default_provider

__all__ = ["Handler"]


class Handler(logging.Handler):
    """``logger.addHandler(usertrace.logging.Handler())``.

    Records are checked against the logger's level before they get here, so
    ``logger.setLevel(logging.DEBUG)`` is what lets debug records reach
    tracing; this handler adds no cost while disabled beyond that check.
    """

    def __init__(
        self,
        provider: Optional[Provider] = None,
        event: str = "log",
        level: Union[int, str] = logging.NOTSET,
    ) -> None:
        super().__init__(level)
        self.provider = provider or default_provider()
        self.tracepoint: Tracepoint = self.provider.tracepoint(
            event, logger=str, level="i32", message=str, file=str, line="u32", thread=str
        )

    def handle(self, record: logging.LogRecord) -> bool:
        # Before filters, the lock and formatting: the whole point.
        if not self.tracepoint.enabled:
            return False
        return bool(super().handle(record))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.tracepoint.emit(
                record.name,
                record.levelno,
                record.getMessage(),
                record.pathname,
                max(0, min(record.lineno or 0, 0xFFFF_FFFF)),
                record.threadName or "",
            )
        except Exception:
            self.handleError(record)

    def close(self) -> None:
        self.tracepoint.close()
        super().close()

"""``traced``: start/stop events with a duration, around a block or a call."""

from __future__ import annotations

import functools
import inspect
import itertools
import threading
import time
import weakref
from types import TracebackType
from typing import Any, Callable, List, Optional, Tuple, Type, TypeVar, Union, cast, overload

from ._native import Tracepoint
from ._provider import Provider, default_provider

__all__ = ["Traced", "traced"]

F = TypeVar("F", bound=Callable[..., Any])

_span_ids = itertools.count(1)
_spans: "weakref.WeakKeyDictionary[Provider, Tuple[Tracepoint, Tracepoint]]" = weakref.WeakKeyDictionary()
_spans_lock = threading.Lock()


def _span_tracepoints(provider: Provider) -> Tuple[Tracepoint, Tracepoint]:
    """``<provider>_span_start`` and ``<provider>_span_stop``, declared once."""
    with _spans_lock:
        pair = _spans.get(provider)
        if pair is None or pair[0].closed:
            start = provider.tracepoint("span_start", name=str, span="u64")
            stop = provider.tracepoint(
                "span_stop", name=str, span="u64", duration_ns="u64", error="bool"
            )
            pair = _spans[provider] = (start, stop)
        return pair


def _provider_of(t: Traced) -> Provider:
    return t._provider


class Traced:
    """A named span: a decorator and a (re-entrant, thread-safe) context
    manager. Emits ``span_start(name, span)`` on entry and ``span_stop(name,
    span, duration_ns, error)`` on exit, where ``span`` pairs the two and
    ``error`` says whether an exception left the block. While neither event
    is enabled it costs two enabled checks."""

    def __init__(self, name: Optional[str], provider: Optional[Provider] = None) -> None:
        self.name = name
        """The span's name; None until it decorates a function (then its
        qualified name)."""
        self._provider = provider or default_provider()
        self._start, self._stop = _span_tracepoints(self._provider)
        self._local = threading.local()

    def _begin(self) -> Optional[Tuple[int, int]]:
        if not (self._start.enabled or self._stop.enabled):
            return None
        span = next(_span_ids)
        self._start.emit(self.name or "", span)
        return span, time.perf_counter_ns()

    def _end(self, begun: Optional[Tuple[int, int]], error: bool) -> None:
        if begun is not None and self._stop.enabled:
            span, t0 = begun
            self._stop.emit(self.name or "", span, time.perf_counter_ns() - t0, error)

    def __enter__(self) -> Traced:
        if self.name is None:
            raise TypeError("a traced block needs a name: with traced('name'): ...")
        stack: Optional[List[Optional[Tuple[int, int]]]] = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        stack.append(self._begin())
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self._end(self._local.stack.pop(), exc_type is not None)

    def __call__(self, func: F) -> F:
        if self.name is None:
            return Traced(func.__qualname__, _provider_of(self))(func)
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                begun = self._begin()
                try:
                    result = await func(*args, **kwargs)
                except BaseException:
                    self._end(begun, True)
                    raise
                self._end(begun, False)
                return result

            return cast(F, async_wrapper)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            begun = self._begin()
            try:
                result = func(*args, **kwargs)
            except BaseException:
                self._end(begun, True)
                raise
            self._end(begun, False)
            return result

        return cast(F, wrapper)

    def __repr__(self) -> str:
        return f"<usertrace.Traced {self.name}>"


@overload
def traced(name: F, /) -> F: ...
@overload
def traced(name: Optional[str] = None, /, *, provider: Optional[Provider] = None) -> Traced: ...
def traced(
    name: Union[str, F, None] = None, /, *, provider: Optional[Provider] = None
) -> Union[Traced, F]:
    """``@traced``, ``@traced("name")`` or ``with traced("name"):``.

    The span is named ``name``, or the function's qualified name; its events
    belong to ``provider`` (default: ``usertrace.default_provider()``).
    """
    if callable(name):
        return Traced(name.__qualname__, provider)(name)
    return Traced(name, provider)

"""``traced``: a span around a block or a call, as the core's span events.

``traced("name")`` under provider ``p`` is the span ``p.span(event)``,
whose event is ``span_event_name("name")``: the name itself when it is a
valid event name, else the core's one mapping (``Foo.bar`` → ``Foo_bar``,
``outer.<locals>.inner`` → ``outer_locals_inner``, ``<lambda>`` →
``lambda``). Entering begins it (``<p>_<event>(span_begin, trace context)``)
as the child of the current trace context (``usertrace.current_context()``:
the enclosing span's, or a caller's made current by ``use_context``; a new
trace under none), and makes its own context current inside; leaving ends
it with ``<p>_span_end(span_end)``, or, when an exception leaves it, with
``<p>_span_error(span_end, error)`` naming the exception's type.
"""

from __future__ import annotations

import functools
import inspect
import threading
from types import TracebackType
from contextvars import Token
from typing import Any, Callable, List, Optional, Tuple, Type, TypeVar, Union, cast, overload

from ._context import _current
from ._native import Span, SpanTracepoint, TraceContext, span_event_name
from ._provider import Provider, default_provider

__all__ = ["Traced", "span_event_name", "traced"]

F = TypeVar("F", bound=Callable[..., Any])

# A recorded span, and the token that puts back the context current
# before it; None for a block entered while the span was disabled.
_Open = Optional[Tuple[Span, Token[Optional[TraceContext]]]]


def _begin(tp: SpanTracepoint) -> _Open:
    """Begins a span of ``tp`` under the current context and makes its
    context current; None (changing nothing) while nobody records it."""
    if not tp.enabled:
        return None
    span = tp.begin_in(_current.get())
    return span, _current.set(span.context)


def _end(opened: _Open, exc_type: Optional[Type[BaseException]] = None) -> None:
    if opened is not None:
        span, token = opened
        _current.reset(token)
        span.__exit__(exc_type, None, None)


class Traced:
    """A named span: a decorator and a (re-entrant, thread-safe) context
    manager. While its begin event is disabled, a decorated call costs one
    ``enabled`` check more than the call, and a ``with`` block two list
    operations; neither allocates."""

    def __init__(self, name: Optional[str], provider: Optional[Provider] = None) -> None:
        self.name = name
        """The span's name; None until it decorates a function (then its
        qualified name)."""
        self._provider = provider or default_provider()
        self.tracepoint: Optional[SpanTracepoint] = None
        """The span's begin event ``<provider>_<span_event_name(name)>``;
        None while the name is."""
        if name is not None:
            self.tracepoint = self._provider.span(span_event_name(name))
        # Per thread, the spans of the `with` blocks open on this object:
        # None for a block entered while the span was disabled.
        self._local = threading.local()

    def __enter__(self) -> Traced:
        tp = self.tracepoint
        if tp is None:
            raise TypeError("a traced block needs a name: with traced('name'): ...")
        opened = _begin(tp)
        try:
            self._local.stack.append(opened)
        except AttributeError:  # this thread's first block on this object
            stack: List[_Open] = [opened]
            self._local.stack = stack
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        _end(self._local.stack.pop(), exc_type)

    def __call__(self, func: F) -> F:
        tp = self.tracepoint
        if tp is None:
            return Traced(func.__qualname__, self._provider)(func)
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                if not tp.enabled:
                    return await func(*args, **kwargs)
                opened, exc_type = _begin(tp), None
                try:
                    return await func(*args, **kwargs)
                except BaseException as e:
                    exc_type = type(e)
                    raise
                finally:
                    _end(opened, exc_type)

            return cast(F, async_wrapper)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not tp.enabled:
                return func(*args, **kwargs)
            opened, exc_type = _begin(tp), None
            try:
                return func(*args, **kwargs)
            except BaseException as e:
                exc_type = type(e)
                raise
            finally:
                _end(opened, exc_type)

        return cast(F, wrapper)

    def __repr__(self) -> str:
        return f"<usertrace.Traced {self.name}>"


def _traced_named(name: str, provider: Optional[Provider]) -> Traced:
    """The provider's one ``Traced`` for ``name``, so a ``with traced(name):``
    declares its span once, not on every entry."""
    provider = provider or default_provider()
    found = provider._traced.get(name)
    if found is None or found.tracepoint is None or found.tracepoint.closed:
        found = provider._traced[name] = Traced(name, provider)
    return found


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
    if name is None:
        return Traced(None, provider)
    return _traced_named(name, provider)

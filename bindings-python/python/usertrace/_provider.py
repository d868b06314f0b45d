"""Providers: a name prefix and the tracepoints declared under it."""

from __future__ import annotations

import os
import threading
import weakref
from types import TracebackType
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Type, TypeVar, Union

from . import _native
from ._native import SpanTracepoint, Tracepoint

if TYPE_CHECKING:
    from ._traced import Traced

__all__ = ["FieldSpec", "Provider", "default_provider"]

FieldSpec = Union[str, Type[int], Type[float], Type[bool], Type[str], Type[bytes]]
"""A field type: ``"u8"``, ``"u16"``, ``"u32"``, ``"u64"``, ``"i8"``, ``"i16"``,
``"i32"``, ``"i64"``, ``"bool"``, ``"f32"``, ``"f64"``, ``"str"``, ``"bytes"``,
``"char[N]"``; or a Python type: ``int`` (i64), ``float`` (f64), ``bool``,
``str``, ``bytes``."""

_PYTHON_TYPES = {bool: "bool", int: "i64", float: "f64", str: "str", bytes: "bytes"}

Fields = Union[Mapping[str, FieldSpec], Iterable[Tuple[str, FieldSpec]]]
T = TypeVar("T", bound=Tracepoint)


def _type_name(event: str, field: str, spec: FieldSpec) -> str:
    if isinstance(spec, str):
        return spec
    for python_type, name in _PYTHON_TYPES.items():
        if spec is python_type:
            return name
    raise TypeError(
        f"field {field} of event {event}: a type is a name like 'u32' or one of "
        f"int, float, bool, str, bytes, not {spec!r}"
    )


class Provider:
    """A group of tracepoints, whose kernel names are ``<provider>_<event>``.

    ``close()`` (or leaving a ``with`` block) unregisters every tracepoint
    declared here; a tracepoint is also unregistered when it is garbage-
    collected. The provider keeps only weak references to them.
    """

    def __init__(self, name: str, *, persist: bool = False, multi_format: bool = False) -> None:
        _native.check_name("provider", name)
        self._name = name
        self._persist = persist
        self._multi_format = multi_format
        self._lock = threading.Lock()
        self._tracepoints: "weakref.WeakSet[Tracepoint]" = weakref.WeakSet()
        self._closed = False
        # <provider>_span_end and <provider>_span_error, declared with the first span.
        self._span_ends: Optional[Tuple[Tracepoint, Tracepoint]] = None
        # usertrace.traced(name) objects by name, so a `with traced("x"):`
        # in a loop declares its span once (filled by _traced.py).
        self._traced: "Dict[str, Traced]" = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def tracepoints(self) -> List[Tracepoint]:
        """The live tracepoints declared by this provider."""
        with self._lock:
            return list(self._tracepoints)

    def tracepoint(self, event: str, fields: Fields = (), /, **kwfields: FieldSpec) -> Tracepoint:
        """Declares and registers ``<provider>_<event>`` with typed fields, in
        order: ``p.tracepoint("request", path=str, status="u16")``. Fields may
        also come as a mapping or as ``(name, type)`` pairs.

        Never fails because user_events is unavailable: the tracepoint is then
        disabled, ``tp.registration_error`` and ``usertrace.status()`` say why,
        and ``tp.register()`` retries. A bad name or type raises, and so does
        a name already registered with other fields (``UsertraceError``).
        """
        declared = self._declared(event, fields, kwfields)
        return self._add(
            lambda: Tracepoint(
                self._name, event, declared, persist=self._persist, multi_format=self._multi_format
            )
        )

    def span(self, event: str, fields: Fields = (), /, **kwfields: FieldSpec) -> SpanTracepoint:
        """Declares and registers a span ``<provider>_<event>``: its begin
        event's first field is the span id (``span_begin``), then the typed
        fields given as for ``tracepoint``. ``tp.begin(...)`` begins one and
        returns a ``Span``; the span ends with ``<provider>_span_end``, or
        ``<provider>_span_error`` (declared with the provider's first span).
        """
        declared = self._declared(event, fields, kwfields)
        end, error = self._span_end_events()
        return self._add(
            lambda: SpanTracepoint(
                self._name, event, declared, end, error,
                persist=self._persist, multi_format=self._multi_format,
            )
        )

    def _span_end_events(self) -> Tuple[Tracepoint, Tracepoint]:
        """``<provider>_span_end`` and ``<provider>_span_error``, declared once."""
        with self._lock:
            ends = self._span_ends
        if ends is None:
            options = dict(persist=self._persist, multi_format=self._multi_format)
            made = (
                self._add(lambda: Tracepoint.span_end(self._name, **options)),
                self._add(lambda: Tracepoint.span_error(self._name, **options)),
            )
            with self._lock:
                ends = self._span_ends = self._span_ends or made
        return ends

    def _declared(self, event: str, fields: Fields, kwfields: Mapping[str, FieldSpec]) -> List[Tuple[str, str]]:
        if self._closed:
            raise ValueError(f"provider {self._name} is closed")
        pairs = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
        pairs.extend(kwfields.items())
        return [(name, _type_name(event, name, spec)) for name, spec in pairs]

    def _add(self, make: Callable[[], T]) -> T:
        """Makes a tracepoint and keeps it, to close with the provider."""
        tp = make()
        with self._lock:
            if self._closed:  # closed meanwhile by another thread
                tp.close()
                raise ValueError(f"provider {self._name} is closed")
            self._tracepoints.add(tp)
        return tp

    def close(self) -> None:
        """Unregisters every tracepoint of this provider. Idempotent."""
        with self._lock:
            self._closed = True
            tracepoints = list(self._tracepoints)
            self._tracepoints.clear()
        for tp in tracepoints:
            tp.close()

    def __enter__(self) -> Provider:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<usertrace.Provider {self._name}{state}>"


_default: Optional[Provider] = None
_default_lock = threading.Lock()


def default_provider() -> Provider:
    """The provider that ``traced``, ``trace_functions`` and
    ``usertrace.logging.Handler`` use when given none: named by the
    ``USERTRACE_PROVIDER`` environment variable, else ``python``."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Provider(os.environ.get("USERTRACE_PROVIDER") or "python")
        return _default

# Stubs of the private native module; checked with `python -m mypy.stubtest usertrace._native`.
from types import TracebackType
from typing import Any, Final, List, Literal, Optional, Sequence, Tuple, Type, final

from typing_extensions import disjoint_base

from ._errors import UsertraceError

__all__ = [
    "AVAILABILITIES", "ERROR_KINDS", "FIELD_TYPES", "MAX_FIELDS", "ATTACH_FD_ENV",
    "OtelLogs", "OtelResources", "OtelSpans", "Span", "SpanTracepoint", "TraceContext", "Tracepoint", "check_name", "span_event_name", "status",
    "transport",
]

MAX_FIELDS: Final[int]
ATTACH_FD_ENV: Final[str]
"""The variable through which `usertrace record -- CMD` hands its programs the
descriptor of the attach handshake. A program that starts others with
``subprocess`` (which closes inherited descriptors) keeps the handshake
for them with ``pass_fds=(int(os.environ[ATTACH_FD_ENV]),)``."""
# The core's code tables as (name, code) pairs, in code order.
ERROR_KINDS: Final[Tuple[Tuple[str, int], ...]]
FIELD_TYPES: Final[Tuple[Tuple[str, int], ...]]
AVAILABILITIES: Final[Tuple[Tuple[str, int], ...]]

def status() -> Tuple[str, Optional[str], List[str], Optional[int], str]: ...
def transport() -> Tuple[str, str, str]:
    """``(transport name, reason, sentence)`` from the core's ``usertrace::transport()``;
    raises ``UsertraceError`` for an invalid ``USERTRACE_TRANSPORT``."""
def check_name(what: str, name: str) -> None: ...
def span_event_name(name: str) -> str:
    """The event name of a span named ``name``: itself if valid, else each run of
    characters outside [A-Za-z0-9_] becomes one ``_``, dropped at either end."""

# Subclassable (SpanTracepoint extends it), with a native layout of its own.
@disjoint_base
class Tracepoint:
    def __new__(
        cls,
        provider: str,
        event: str,
        fields: Sequence[Tuple[str, str]],
        *,
        persist: bool = False,
        multi_format: bool = False,
    ) -> Tracepoint: ...
    @staticmethod
    def span_end(provider: str, *, persist: bool = False, multi_format: bool = False) -> Tracepoint:
        """``<provider>_span_end(span_end u64)``, which ends the provider's spans."""
    @staticmethod
    def span_error(provider: str, *, persist: bool = False, multi_format: bool = False) -> Tracepoint:
        """``<provider>_span_error(span_end u64, error str)``: ends a span because of an error."""
    @property
    def enabled(self) -> bool:
        """True while a tracer is attached: one load of the word the kernel writes."""
    @property
    def name(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def event(self) -> str: ...
    @property
    def fields(self) -> List[Tuple[str, str]]: ...
    @property
    def format(self) -> str: ...
    @property
    def registered(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def registration_error(self) -> Optional[UsertraceError]: ...
    def register(self) -> None: ...
    def close(self) -> None: ...
    def emit(self, *args: Any, **kwargs: Any) -> None: ...
    def validate(self, *args: Any, **kwargs: Any) -> None: ...

@final
class SpanTracepoint(Tracepoint):
    def __new__(
        cls,
        provider: str,
        event: str,
        fields: Sequence[Tuple[str, str]],
        end: Tracepoint,
        error: Tracepoint,
        *,
        persist: bool = False,
        multi_format: bool = False,
    ) -> SpanTracepoint: ...
    def begin(self, *args: Any, **kwargs: Any) -> Span:
        """Begins a span with these values after its id; while disabled, returns a
        span that was not begun (id 0) and checks nothing."""
    def begin_in(self, parent: Optional[TraceContext], /, *args: Any, **kwargs: Any) -> Span:
        """Begins a span under ``parent`` (None: a new trace), writing its trace
        context; while disabled, a span not begun whose ``context`` is ``parent``."""
    def validate(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def end_event(self) -> Tracepoint: ...
    @property
    def error_event(self) -> Tracepoint: ...

@final
class Span:
    @property
    def id(self) -> int:
        """The id its events carry; 0 if it was not begun."""
    @property
    def open(self) -> bool: ...
    @property
    def context(self) -> Optional[TraceContext]:
        """What to hand on: its own context (``begin_in``), else its parent's."""
    @property
    def traceparent(self) -> Optional[str]: ...
    def end(self, error: Optional[str] = None) -> None:
        """``<provider>_span_end``, or with ``error`` ``<provider>_span_error``; once."""
    def __enter__(self) -> Span: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        _exc: Optional[BaseException],
        _tb: Optional[TracebackType],
    ) -> Literal[False]: ...

@final
class TraceContext:
    """A W3C trace context: trace id, span id, flags and ``tracestate``."""
    @staticmethod
    def from_traceparent(traceparent: str, tracestate: Optional[str] = None) -> Optional[TraceContext]:
        """None for a malformed, all-zero or over-long ``traceparent``; never raises."""
    @staticmethod
    def extract(headers: Any) -> Optional[TraceContext]:
        """From a mapping with ``items()``, names matched without regard to case."""
    def inject(self, headers: Any) -> None:
        """Sets ``traceparent`` (and ``tracestate``) in a mutable mapping."""
    @property
    def traceparent(self) -> str: ...
    @property
    def tracestate(self) -> Optional[str]: ...
    @property
    def trace_id(self) -> str: ...
    @property
    def span_id(self) -> str: ...
    @property
    def sampled(self) -> bool: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class OtelSpans:
    def __new__(cls, provider: str) -> "OtelSpans": ...
    @property
    def enabled(self) -> bool: ...
    def emit(
        self,
        start_ns: int,
        duration_ns: int,
        trace_id: int,
        span_id: int,
        parent_span_id: int,
        name: str,
        scope_name: str,
        scope_version: str,
        status_code: int,
        otlp: bytes,
    ) -> int: ...

@final
class OtelResources:
    def __new__(cls, provider: str) -> "OtelResources": ...
    @property
    def enabled(self) -> bool: ...
    def emit(self, service_name: str, otlp: bytes) -> bool: ...

@final
class OtelLogs:
    def __new__(cls, provider: str) -> "OtelLogs": ...
    @property
    def enabled(self) -> bool: ...
    def emit(
        self,
        trace_id: int,
        span_id: int,
        severity_number: int,
        body: str,
        scope_name: str,
        scope_version: str,
        otlp: bytes,
    ) -> int: ...

"""usertrace: Linux user_events tracepoints for Python.

    import usertrace

    app = usertrace.Provider("myapp")
    request = app.tracepoint("request", path=str, status="u16", micros="u64")

    if request.enabled:                      # about an attribute read
        request.emit(path, 200, micros)      # or emit(path=..., status=...)

    handle = app.span("handle", request_id="u64", path=str)
    with handle.begin(7, "/x"):              # myapp_handle(span_begin, 7, "/x")
        ...                                  # then myapp_span_end(span_end)

    @usertrace.traced                        # python_<qualified name>, mapped
    def work(): ...                          # by usertrace.span_event_name

    # One trace across services (W3C trace context):
    with usertrace.use_context(usertrace.extract(request.headers)):
        with usertrace.traced("handle"):     # the caller's trace continues
            usertrace.inject(outgoing_headers)

While no tracer (perf, ftrace, ``usertrace record``) is attached,
``enabled`` is False and ``emit`` returns at once. When one is, each emit is
one ``writev`` into the kernel's trace buffers: no daemon, no ctypes, no
uprobes. Where the kernel has no user_events (Linux 6.4+ with
CONFIG_USER_EVENTS), events go through shared memory in ``/dev/shm`` instead,
which ``usertrace record`` reads; ``usertrace.transport()`` says which way
they go, and why. Where user_events exists but may not be used (no write
access to tracefs' ``user_events_data``), every tracepoint stays disabled;
nothing raises, and ``usertrace.status()`` and ``tp.registration_error`` say
why.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _distribution_version

from ._context import current_context, extract, inject, use_context
from ._errors import ErrorKind, UsertraceError
from ._functions import FunctionTracer, trace_functions
from ._native import ATTACH_FD_ENV, MAX_FIELDS, Span, SpanTracepoint, TraceContext, Tracepoint
from ._provider import FieldSpec, Provider, default_provider
from ._status import Availability, Status, status
from ._traced import Traced, span_event_name, traced
from ._transport import Transport, TransportChoice, transport

# The installed distribution's version, which maturin takes from Cargo.toml.
try:
    __version__: str = _distribution_version("usertrace")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0+unknown"



def __getattr__(name: str) -> object:
    # ``usertrace.logging.Handler()`` after a plain ``import usertrace``, as
    # the README shows it, without importing the standard ``logging`` for
    # programs that never touch the handler. Once imported, the submodule is
    # an attribute of the package, and this is not called again.
    if name == "logging":
        import importlib

        return importlib.import_module(f"{__name__}.logging")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ATTACH_FD_ENV",
    "MAX_FIELDS",
    "Availability",
    "ErrorKind",
    "FieldSpec",
    "FunctionTracer",
    "Provider",
    "Span",
    "SpanTracepoint",
    "Status",
    "TraceContext",
    "Traced",
    "Tracepoint",
    "Transport",
    "TransportChoice",
    "UsertraceError",
    "current_context",
    "default_provider",
    "extract",
    "inject",
    "span_event_name",
    "status",
    "trace_functions",
    "traced",
    "transport",
    "use_context",
]

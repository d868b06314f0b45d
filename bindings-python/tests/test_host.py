"""Without user_events (the host): everything is disabled, emits do nothing,
and status() and registration_error say why."""

from __future__ import annotations

import asyncio
import inspect
import logging

import pytest

import usertrace
from usertrace import Availability, ErrorKind, UsertraceError

pytestmark = pytest.mark.host


def test_status_explains_why_tracing_is_unavailable() -> None:
    status = usertrace.status()
    assert not status.available and not status
    assert status.availability is not Availability.AVAILABLE
    assert str(status).startswith("user_events is not available: ")
    assert status.tried


def test_tracepoints_are_declared_disabled_with_the_reason(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", x="u8", s=str)
    assert tp.enabled is False
    assert tp.registered is False
    error = tp.registration_error
    assert isinstance(error, UsertraceError) and error.kind is ErrorKind.UNAVAILABLE
    assert str(usertrace.status()) in str(error)


def test_emit_does_nothing_and_checks_nothing(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", x="u8")
    tp.emit(1)
    tp.emit(1000)  # not checked while disabled: validate() checks
    tp.emit()


def test_register_raises_unavailable(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev")
    with pytest.raises(UsertraceError) as e:
        tp.register()
    assert e.value.kind is ErrorKind.UNAVAILABLE


def test_the_logging_handler_does_no_formatting_while_disabled(provider: usertrace.Provider) -> None:
    import usertrace.logging

    class Loud:
        def __str__(self) -> str:
            raise AssertionError("formatted while disabled")

    log = logging.getLogger("usertrace.test.host")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    handler = usertrace.logging.Handler(provider)
    log.addHandler(handler)
    try:
        log.debug("value %s", Loud())
    finally:
        log.removeHandler(handler)
        handler.close()


def test_the_logging_handler_is_reached_after_a_plain_import_usertrace() -> None:
    # A fresh interpreter: in this one a test may have imported it already.
    import subprocess
    import sys

    program = (
        "import sys, usertrace\n"
        "assert 'usertrace.logging' not in sys.modules, 'imported before use'\n"
        "handler = usertrace.logging.Handler()\n"
        "print(type(handler).__module__, type(handler).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert out.stdout == "usertrace.logging Handler\n", out.stderr


def test_traced_and_function_tracing_run_as_no_ops(provider: usertrace.Provider) -> None:
    @usertrace.traced(provider=provider)
    def work(x: int) -> int:
        return x + 1

    with usertrace.traced("block", provider=provider) as block:
        assert block is usertrace.traced("block", provider=provider)
        assert work(1) == 2
    with usertrace.trace_functions(provider) as tracer:
        assert tracer.running
        assert work(2) == 3
    assert not tracer.running


def test_traced_functions_return_and_raise_as_undecorated_while_disabled(provider: usertrace.Provider) -> None:
    @usertrace.traced(provider=provider)
    def fails() -> None:
        raise KeyError("x")

    @usertrace.traced("coro", provider=provider)
    async def coro(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    with pytest.raises(KeyError):
        fails()
    assert asyncio.run(coro(21)) == 42
    assert fails.__name__ == "fails" and inspect.iscoroutinefunction(coro)
    with pytest.raises(KeyError):
        with usertrace.traced("block", provider=provider):
            raise KeyError


def test_begin_while_disabled_returns_one_span_that_was_not_begun(provider: usertrace.Provider) -> None:
    tp = provider.span("handle", request_id="u64", path=str)
    assert not tp.enabled
    span = tp.begin(7, "/x")
    # One shared object: beginning while disabled allocates no span.
    assert tp.begin(8, "/y") is span and provider.span("other").begin() is span
    assert span.id == 0 and not span.open
    assert repr(span) == "<usertrace.Span not begun>"
    span.end()
    span.end(error="KeyError")
    with span as entered:
        assert entered is span
    with pytest.raises(KeyError):
        with tp.begin(9, "/z"):
            raise KeyError


def test_begin_checks_nothing_while_disabled_and_validate_does(provider: usertrace.Provider) -> None:
    tp = provider.span("handle", request_id="u64")
    tp.begin(-1)
    tp.begin("not a number", extra=1)
    with pytest.raises(OverflowError, match="field request_id"):
        tp.validate(-1)


def test_span_end_events_are_declared_disabled_with_the_reason(provider: usertrace.Provider) -> None:
    tp = provider.span("handle")
    for event in (tp, tp.end_event, tp.error_event):
        assert not event.enabled and not event.registered
        error = event.registration_error
        assert isinstance(error, UsertraceError) and error.kind is ErrorKind.UNAVAILABLE

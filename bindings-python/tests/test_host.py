"""Without user_events (the host): everything is disabled, emits do nothing,
and status() and registration_error say why."""

from __future__ import annotations

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


def test_traced_and_function_tracing_run_as_no_ops(provider: usertrace.Provider) -> None:
    @usertrace.traced(provider=provider)
    def work(x: int) -> int:
        return x + 1

    with usertrace.traced("block", provider=provider):
        assert work(1) == 2
    with usertrace.trace_functions(provider) as tracer:
        assert tracer.running
        assert work(2) == 3
    assert not tracer.running

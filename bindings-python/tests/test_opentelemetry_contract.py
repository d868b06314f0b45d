"""`usertrace.opentelemetry` keeps the SDK's contracts without a recorder:
found by name, `shutdown` and `force_flush` as the SDK says, and the
sampler drops what nobody would record while passing the context on."""

from __future__ import annotations

import logging
from typing import Any, List, Tuple

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs usertrace[opentelemetry]: run-tests.sh installs it")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export import SpanExportResult  # noqa: E402
from opentelemetry.sdk.trace.sampling import Decision  # noqa: E402
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState  # noqa: E402
# The SDK's own look-up of its entry points (the standard library's takes
# `group=` only from Python 3.10): found by name as the SDK finds them.
from opentelemetry.util._importlib_metadata import entry_points  # noqa: E402

import usertrace  # noqa: E402
from usertrace import opentelemetry as ut_otel  # noqa: E402

pytestmark = pytest.mark.host


def loaded(group: str, name: str) -> object:
    (point,) = [p for p in entry_points(group=group) if p.name == name]
    return point.load()


def test_the_exporters_and_samplers_are_found_by_their_names() -> None:
    assert loaded("opentelemetry_traces_exporter", "usertrace") is ut_otel.UsertraceSpanExporter
    assert loaded("opentelemetry_logs_exporter", "usertrace") is ut_otel.UsertraceLogExporter
    assert loaded("opentelemetry_traces_sampler", "usertrace") is ut_otel.usertrace_sampler
    assert loaded("opentelemetry_traces_sampler", "parentbased_usertrace") is ut_otel.parentbased_usertrace_sampler


def test_force_flush_returns_at_once_and_exports_after_shutdown_fail() -> None:
    exporter = ut_otel.UsertraceSpanExporter()
    assert exporter.force_flush(timeout_millis=0) is True
    exporter.shutdown()
    assert exporter.export([]) is SpanExportResult.FAILURE


def test_without_usertrace_the_exporter_fails_the_batch_and_says_why_once(caplog: pytest.LogCaptureFixture) -> None:
    if usertrace.status().available or usertrace.transport().kind is not usertrace.Transport.USER_EVENTS:
        pytest.skip("usertrace can register here")
    with caplog.at_level(logging.WARNING):
        assert ut_otel.UsertraceSpanExporter().export([]) is SpanExportResult.FAILURE
        assert ut_otel.UsertraceSpanExporter().export([]) is SpanExportResult.FAILURE
    said = [r for r in caplog.records if "will not be recorded" in r.getMessage()]
    assert len(said) <= 1


def test_the_sampler_drops_what_nobody_records_and_keeps_the_parents_tracestate() -> None:
    state = TraceState([("vendor", "x")])
    parent = SpanContext(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7, is_remote=True, trace_flags=TraceFlags(1), trace_state=state)
    context = trace.set_span_in_context(NonRecordingSpan(parent))
    result = ut_otel.usertrace_sampler().should_sample(context, parent.trace_id, "GET /")
    assert result.decision is Decision.DROP
    assert result.trace_state == state
    assert ut_otel.UsertraceSampler().get_description() == "UsertraceSampler"


class RecordingTracepoints:
    """Stands for the native span events: listening, keeping each emit's arguments."""

    enabled = True

    def __init__(self) -> None:
        self.emitted: List[Tuple[Any, ...]] = []

    def emit(self, *args: Any) -> int:
        self.emitted.append(args)
        return 1


def test_the_readable_status_code_is_the_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    provider, memory = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("status.test")
    for code in (StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR):
        with tracer.start_as_current_span(code.name) as span:
            span.set_status(Status(code))
    native = RecordingTracepoints()
    monkeypatch.setattr(ut_otel, "_tracepoints", lambda: native)
    assert ut_otel.UsertraceSpanExporter().export(memory.get_finished_spans()) is SpanExportResult.SUCCESS
    # emit(start, duration, trace, span, parent, name, scope, version, status_code, otlp)
    assert [(args[5], args[8]) for args in native.emitted] == [("UNSET", 0), ("OK", 1), ("ERROR", 2)]

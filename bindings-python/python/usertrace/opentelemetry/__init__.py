"""OpenTelemetry's Python SDK, exporting through usertrace.

A service instrumented with OpenTelemetry switches with no code change::

    pip install 'usertrace[opentelemetry]'
    OTEL_TRACES_EXPORTER=usertrace opentelemetry-instrument python app.py

Each finished span becomes one usertrace event (more, for a span too large
for one), which carries the span as the OTLP protobuf the SDK's own OTLP
exporter would send; ``usertrace record --otlp`` sends it on exactly. The
event format is the core's (``usertrace::otel_span``).

``OTEL_TRACES_SAMPLER=usertrace`` (or ``parentbased_usertrace``) records a
span only while a recorder listens: otherwise spans are non-recording and
their context still propagates.

This is an extra of the ``usertrace`` distribution, not a package of its
own: it needs the native module that wheel already ships, one version of
both is always installed together, and a user who does not ask for the
extra gets no OpenTelemetry dependency.

``USERTRACE_OTEL_PROVIDER`` names the provider of the events
(``<provider>_otel_span``); the default is ``usertrace``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Optional, Sequence

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import Decision, ParentBased, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind, get_current_span
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes

from .._errors import UsertraceError
from .._native import OtelSpans

__all__ = [
    "PROVIDER_ENV",
    "UsertraceSampler",
    "UsertraceSpanExporter",
    "parentbased_usertrace_sampler",
    "usertrace_sampler",
]

PROVIDER_ENV = "USERTRACE_OTEL_PROVIDER"
_logger = logging.getLogger(__name__)

_lock = threading.Lock()
_spans: Optional[OtelSpans] = None
_unavailable: Optional[UsertraceError] = None


def _tracepoints() -> Optional[OtelSpans]:
    """The process's span events, registered once; None (said once in the
    log) where usertrace cannot register them."""
    global _spans, _unavailable
    if _spans is not None or _unavailable is not None:
        return _spans
    with _lock:
        if _spans is None and _unavailable is None:
            try:
                _spans = OtelSpans(os.environ.get(PROVIDER_ENV) or "usertrace")
            except UsertraceError as e:
                _unavailable = e
                _logger.warning("usertrace: OpenTelemetry spans will not be recorded: %s", e)
    return _spans


class UsertraceSpanExporter(SpanExporter):
    """Writes each span of a batch as usertrace events, in the calling
    thread (the SDK's batch thread under ``opentelemetry-instrument``).

    It never blocks: an emit writes into a kernel buffer or a shared-memory
    ring, and what does not fit is counted by the recorder as lost. While
    no recorder listens, a batch costs one check. Spans it could not write
    are counted in ``dropped`` and said once in the log.
    """

    def __init__(self) -> None:
        self._shutdown = False
        self.dropped = 0
        self._said_dropped = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            return SpanExportResult.FAILURE
        tracepoints = _tracepoints()
        if tracepoints is None:
            return SpanExportResult.FAILURE
        if not tracepoints.enabled:
            return SpanExportResult.SUCCESS
        # TODO(resource): hand the SDK's Resource (spans[0].resource) to the
        # core's per-process resource API once it lands; until then the
        # recorder names the process from what it sees.
        failed = 0
        # The SDK's times are Unix; usertrace events' are CLOCK_MONOTONIC.
        monotonic_minus_unix = time.monotonic_ns() - time.time_ns()
        for resource_spans in encode_spans(spans).resource_spans:
            for scope_spans in resource_spans.scope_spans:
                scope = scope_spans.scope
                for span in scope_spans.spans:
                    try:
                        tracepoints.emit(
                            max(0, span.start_time_unix_nano + monotonic_minus_unix),
                            max(0, span.end_time_unix_nano - span.start_time_unix_nano),
                            int.from_bytes(span.trace_id, "big"),
                            int.from_bytes(span.span_id, "big"),
                            int.from_bytes(span.parent_span_id, "big") if span.parent_span_id else 0,
                            span.name,
                            scope.name,
                            scope.version,
                            span.SerializeToString(),
                        )
                    except (UsertraceError, ValueError) as e:
                        failed += 1
                        self._say_dropped(e)
        self.dropped += failed
        return SpanExportResult.FAILURE if failed else SpanExportResult.SUCCESS

    def _say_dropped(self, error: Exception) -> None:
        if not self._said_dropped:
            self._said_dropped = True
            _logger.warning("usertrace: a span could not be written (counted in UsertraceSpanExporter.dropped): %s", error)

    def shutdown(self) -> None:
        """Later exports fail, as the SDK's contract says; nothing is
        buffered here, so there is nothing to send first."""
        self._shutdown = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """True at once: every span is written when it is exported."""
        return True


class UsertraceSampler(Sampler):
    """Records a span only while a recorder listens to the span events.

    Otherwise the span is non-recording: it costs no attributes, no export,
    and its context (trace id, tracestate) still propagates, so a service
    nobody records does not cut the trace.
    """

    def should_sample(
        self,
        parent_context: Optional[Context],
        trace_id: int,
        name: str,
        kind: Optional[SpanKind] = None,
        attributes: Attributes = None,
        links: Optional[Sequence[Link]] = None,
        trace_state: Optional[TraceState] = None,
    ) -> SamplingResult:
        parent = get_current_span(parent_context).get_span_context()
        state = parent.trace_state if parent is not None and parent.is_valid else None
        tracepoints = _tracepoints()
        if tracepoints is not None and tracepoints.enabled:
            return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes, state)
        return SamplingResult(Decision.DROP, None, state)

    def get_description(self) -> str:
        return "UsertraceSampler"


def usertrace_sampler(argument: Optional[str] = None) -> Sampler:
    """``OTEL_TRACES_SAMPLER=usertrace`` (the SDK passes the sampler's
    argument, which this sampler takes none of)."""
    return UsertraceSampler()


def parentbased_usertrace_sampler(argument: Optional[str] = None) -> Sampler:
    """``OTEL_TRACES_SAMPLER=parentbased_usertrace``: a span with a parent
    follows its parent's decision; a root span, ``UsertraceSampler``'s."""
    return ParentBased(UsertraceSampler())

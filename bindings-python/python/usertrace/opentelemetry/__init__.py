"""OpenTelemetry's Python SDK, exporting through usertrace.

A service instrumented with OpenTelemetry switches with no code change::

    pip install 'usertrace[opentelemetry]'
    OTEL_TRACES_EXPORTER=usertrace OTEL_LOGS_EXPORTER=usertrace opentelemetry-instrument python app.py

Each finished span (and each log record) becomes one usertrace event (more, for a span too large
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

The SDK's Resource (``service.name`` and the rest, built in code or
detected) goes too, as ``<provider>_otel_resource`` (the core's
``usertrace::otel_resource``): each export a recorder sees writes it first,
at most once a second, so the recorder sends the spans under it, whenever
it attached. It is serialized once per Resource; an export then costs one
comparison of its bytes.

``USERTRACE_OTEL_PROVIDER`` names the provider of the events
(``<provider>_otel_span``); the default is ``usertrace``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Dict, Iterable, Optional, Sequence, Tuple

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common._internal import _encode_resource
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import Decision, ParentBased, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind, get_current_span
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes

from .._errors import UsertraceError
from .._native import OtelLogs, OtelResources, OtelSpans

__all__ = [
    "PROVIDER_ENV",
    "UsertraceLogExporter",
    "UsertraceSampler",
    "UsertraceSpanExporter",
    "parentbased_usertrace_sampler",
    "usertrace_sampler",
]

PROVIDER_ENV = "USERTRACE_OTEL_PROVIDER"
_logger = logging.getLogger(__name__)

_lock = threading.Lock()
_spans: Optional[OtelSpans] = None
_logs: Optional[OtelLogs] = None
_resources: Optional[OtelResources] = None
_unavailable: Optional[UsertraceError] = None


def _provider() -> str:
    return os.environ.get(PROVIDER_ENV) or "usertrace"


def _register() -> None:
    """Registers the process's span and log events, once; where usertrace
    cannot, says why once in the log and leaves them None."""
    global _spans, _logs, _resources, _unavailable
    with _lock:
        if _spans is None and _unavailable is None:
            try:
                _spans, _logs, _resources = OtelSpans(_provider()), OtelLogs(_provider()), OtelResources(_provider())
            except UsertraceError as e:
                _unavailable = e
                _logger.warning("usertrace: OpenTelemetry spans and logs will not be recorded: %s", e)


def _tracepoints() -> Optional[OtelSpans]:
    """The process's span events; None where usertrace cannot register them."""
    if _spans is None and _unavailable is None:
        _register()
    return _spans


def _log_tracepoints() -> Optional[OtelLogs]:
    """The process's log record events; None where usertrace cannot register them."""
    if _logs is None and _unavailable is None:
        _register()
    return _logs


class _ResourceWriter:
    """Writes the SDK's Resource before an export's items: each Resource
    object is serialized once (kept by identity, with the object so its id
    stays its own); whether it is due is the core's rule."""

    def __init__(self) -> None:
        self._encoded: Dict[int, Tuple[Resource, str, bytes]] = {}
        self._said_failed = False

    def write(self, resources: Iterable[Resource]) -> bool:
        """Writes each resource of an export, in order; False if one could
        not be written (said once in the log)."""
        if _resources is None:
            return True
        ok, last = True, None
        for resource in resources:
            if resource is last:
                continue
            last = resource
            try:
                _resources.emit(*self._encode(resource))
            except (UsertraceError, ValueError) as e:
                ok = False
                if not self._said_failed:
                    self._said_failed = True
                    _logger.warning("usertrace: the SDK's resource could not be written; the recorder names the process from its environment: %s", e)
        return ok

    def _encode(self, resource: Resource) -> Tuple[str, bytes]:
        kept = self._encoded.get(id(resource))
        if kept is None or kept[0] is not resource:
            service = resource.attributes.get("service.name")
            kept = (resource, "" if service is None else str(service), _encode_resource(resource).SerializeToString())
            # One entry per Resource a provider made; a process has few.
            if len(self._encoded) >= 64:
                self._encoded.clear()
            self._encoded[id(resource)] = kept
        return kept[1], kept[2]


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
        self._resource = _ResourceWriter()
        # Registered now, not at the first export: a recorder already
        # listening (a node's agent) then attaches during the SDK's batch
        # delay, and sees the first batch.
        _register()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            return SpanExportResult.FAILURE
        tracepoints = _tracepoints()
        if tracepoints is None:
            return SpanExportResult.FAILURE
        if not tracepoints.enabled:
            return SpanExportResult.SUCCESS
        # The resource first, so that a recorder that just attached names
        # this batch's spans by it.
        resource_written = self._resource.write(s.resource for s in spans)
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
                            # The encoder's copy of the SDK's status_code.value, so
                            # the readable field says what the protobuf says.
                            span.status.code,
                            span.SerializeToString(),
                        )
                    except (UsertraceError, ValueError) as e:
                        failed += 1
                        self._say_dropped(e)
        self.dropped += failed
        return SpanExportResult.FAILURE if failed or not resource_written else SpanExportResult.SUCCESS

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


class UsertraceLogExporter(LogRecordExporter):
    """Writes each log record of a batch as a usertrace event
    (``OTEL_LOGS_EXPORTER=usertrace``); like the span exporter, it never
    blocks, costs one check per batch while nobody records, and counts
    what it could not write in ``dropped``."""

    def __init__(self) -> None:
        self._shutdown = False
        self.dropped = 0
        self._said_dropped = False
        self._resource = _ResourceWriter()
        _register()  # as the span exporter does, for the same reason

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        if self._shutdown:
            return LogRecordExportResult.FAILURE
        tracepoints = _log_tracepoints()
        if tracepoints is None:
            return LogRecordExportResult.FAILURE
        if not tracepoints.enabled:
            return LogRecordExportResult.SUCCESS
        resource_written = self._resource.write(r.resource for r in batch)
        failed = 0
        for resource_logs in encode_logs(batch).resource_logs:
            for scope_logs in resource_logs.scope_logs:
                scope = scope_logs.scope
                for log in scope_logs.log_records:
                    body = log.body.string_value if log.body.HasField("string_value") else ""
                    try:
                        tracepoints.emit(
                            int.from_bytes(log.trace_id, "big") if log.trace_id else 0,
                            int.from_bytes(log.span_id, "big") if log.span_id else 0,
                            log.severity_number,
                            body,
                            scope.name,
                            scope.version,
                            log.SerializeToString(),
                        )
                    except (UsertraceError, ValueError) as e:
                        failed += 1
                        if not self._said_dropped:
                            self._said_dropped = True
                            _logger.warning("usertrace: a log record could not be written (counted in dropped): %s", e)
        self.dropped += failed
        return LogRecordExportResult.FAILURE if failed or not resource_written else LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        """Later exports fail; nothing is buffered here."""
        self._shutdown = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """True at once: every record is written when it is exported."""
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

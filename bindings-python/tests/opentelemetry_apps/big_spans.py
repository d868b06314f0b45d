"""Spans too large for one event, through the SDK with the usertrace
exporter, and the same spans into `$MEMORY_SPANS_FILE` (as
memory_exporter.py writes them): one with a 20 KiB attribute, an event, a
link, a kind and an error status; one with 200 attributes."""

import os
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from usertrace.opentelemetry import UsertraceSpanExporter

provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=256))
memory = InMemorySpanExporter()
provider.add_span_processor(SimpleSpanProcessor(UsertraceSpanExporter()))
provider.add_span_processor(SimpleSpanProcessor(memory))
tracer = provider.get_tracer("big.spans", "1.2.3")

elsewhere = SpanContext(0x1234, 0x5678, is_remote=True, trace_flags=TraceFlags(1))
with tracer.start_as_current_span("big", kind=SpanKind.CLIENT, links=[Link(elsewhere, {"link.n": 1})]) as span:
    span.set_attribute("payload", "x" * 20 * 1024)
    span.add_event("retry", {"attempt": 2, "codes": [500, 503]})
    span.set_status(Status(StatusCode.ERROR, "upstream failed"))
with tracer.start_as_current_span("wide") as span:
    for i in range(200):
        span.set_attribute(f"attr.{i:03}", i if i % 2 else f"value {i}")
provider.shutdown()
Path(os.environ["MEMORY_SPANS_FILE"]).write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())

"""The tests' second exporter, found by name as any exporter is
(`OTEL_TRACES_EXPORTER=usertrace,usertrace_test_memory`, through the
entry point beside it), so the app runs unchanged: what the SDK's
`InMemorySpanExporter` saw, written at shutdown to `$MEMORY_SPANS_FILE` as
the OTLP request the SDK's own OTLP exporter would have sent."""

import os
from pathlib import Path
from typing import Sequence

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class FileMemoryExporter(SpanExporter):
    def __init__(self) -> None:
        self.memory = InMemorySpanExporter()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.memory.export(spans)

    def shutdown(self) -> None:
        spans = self.memory.get_finished_spans()
        Path(os.environ["MEMORY_SPANS_FILE"]).write_bytes(encode_spans(spans).SerializeToString())
        self.memory.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

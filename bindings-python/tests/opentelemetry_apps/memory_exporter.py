"""The tests' second exporters, found by name as any exporter is
(`OTEL_TRACES_EXPORTER=usertrace,usertrace_test_memory`, and likewise
`OTEL_LOGS_EXPORTER`, through the entry points beside them), so the app
runs unchanged: what the SDK's in-memory exporters saw, written at
shutdown to `$MEMORY_SPANS_FILE` and `$MEMORY_LOGS_FILE` as the OTLP
requests the SDK's own OTLP exporter would have sent."""

import os
from pathlib import Path
from typing import Sequence

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, LogRecordExporter, LogRecordExportResult
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


class FileMemoryLogExporter(LogRecordExporter):
    def __init__(self) -> None:
        self.memory = InMemoryLogRecordExporter()

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        return self.memory.export(batch)

    def shutdown(self) -> None:
        records = self.memory.get_finished_logs()
        Path(os.environ["MEMORY_LOGS_FILE"]).write_bytes(encode_logs(records).SerializeToString())
        self.memory.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

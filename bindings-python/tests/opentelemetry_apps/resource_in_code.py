"""A service whose Resource is built in code (no OTEL_SERVICE_NAME needed):
a service name, a custom string and a custom integer attribute, besides
what the SDK detects. Its spans and a log record go through the usertrace
exporters and into the SDK's in-memory exporters, whose requests (with
the resource) are written at exit to `$MEMORY_SPANS_FILE` and
`$MEMORY_LOGS_FILE`, as memory_exporter.py writes them.

With `LATE_RUN_S` set, it says `ready` and then makes a span every 20 ms
for that many seconds, for a recorder that attaches meanwhile."""

import logging
import os
import sys
import time
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from usertrace.opentelemetry import UsertraceLogExporter, UsertraceSpanExporter

resource = Resource.create({"service.name": "checkout-py", "deployment.tier": "canary", "checkout.shard": 7})
provider = TracerProvider(resource=resource)
memory = InMemorySpanExporter()
provider.add_span_processor(SimpleSpanProcessor(UsertraceSpanExporter()))
provider.add_span_processor(SimpleSpanProcessor(memory))
loggers = LoggerProvider(resource=resource)
memory_logs = InMemoryLogRecordExporter()
loggers.add_log_record_processor(SimpleLogRecordProcessor(UsertraceLogExporter()))
loggers.add_log_record_processor(SimpleLogRecordProcessor(memory_logs))
log = logging.getLogger("checkout")
log.addHandler(LoggingHandler(logger_provider=loggers))
log.setLevel(logging.INFO)
tracer = provider.get_tracer("checkout", "1.0")

late = os.environ.get("LATE_RUN_S")
if late:
    print("ready", flush=True)
    end = time.monotonic() + float(late)
    while time.monotonic() < end:
        with tracer.start_as_current_span("tick"):
            pass
        time.sleep(0.02)
else:
    with tracer.start_as_current_span("GET /cart"):
        log.warning("cart loaded")
        with tracer.start_as_current_span("load cart"):
            pass
provider.shutdown()
loggers.shutdown()
Path(os.environ["MEMORY_SPANS_FILE"]).write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())
Path(os.environ["MEMORY_LOGS_FILE"]).write_bytes(encode_logs(memory_logs.get_finished_logs()).SerializeToString())
sys.exit(0)

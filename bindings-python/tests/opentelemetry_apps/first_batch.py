"""A service that starts up (its SDK and exporter built), says `built`,
waits for a line on stdin (its own start-up, as long as the test needs),
handles one request in a span, and exits: the span's batch is the
exporter's first export."""

import sys

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from usertrace.opentelemetry import UsertraceSpanExporter

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(UsertraceSpanExporter()))
print("built", flush=True)
sys.stdin.readline()
with provider.get_tracer("first").start_as_current_span("GET /first"):
    pass
provider.shutdown()

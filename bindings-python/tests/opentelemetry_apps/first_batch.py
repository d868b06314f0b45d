"""A service that starts up (its SDK and exporter built, then two seconds
of its own start-up), handles one request in a span, and exits: the
span's batch is the exporter's first export."""

import time

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from usertrace.opentelemetry import UsertraceSpanExporter

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(UsertraceSpanExporter()))
time.sleep(2)
with provider.get_tracer("first").start_as_current_span("GET /first"):
    pass
provider.shutdown()

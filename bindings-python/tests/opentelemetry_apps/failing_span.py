"""A few spans that succeed, then one that fails, through the SDK with the
usertrace exporter: what a flight recorder triggered by
`<provider>_otel_span:status_code==2` should dump. Stays alive a while
after the failure, so the recorder writes its dump while the app runs."""

import time

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from usertrace.opentelemetry import UsertraceSpanExporter

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(UsertraceSpanExporter()))
tracer = provider.get_tracer("failing.app", "1.0")

for i in range(3):
    with tracer.start_as_current_span(f"ok {i}") as span:
        span.set_status(Status(StatusCode.OK))
    time.sleep(0.05)
with tracer.start_as_current_span("charge card") as span:
    span.set_status(Status(StatusCode.ERROR, "card declined"))
time.sleep(2)
provider.shutdown()

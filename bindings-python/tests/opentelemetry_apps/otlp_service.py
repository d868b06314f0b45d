"""A service that exports OTLP itself, with no usertrace: OpenTelemetry's
SDK and its own OTLP/HTTP exporter, sending each span as it ends to
`$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, under `$OTEL_SERVICE_NAME`.
`GET /<path>` continues the caller's W3C trace context in a SERVER span
and answers with the `traceparent` header it was sent. Serves on
`$APP_PORT` until SIGTERM, then shuts the SDK down."""

import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry import propagate
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

# Simple, not batched: the span is sent before the reply, so it is in the
# endpoint's hands by the time the caller has its answer.
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
tracer = provider.get_tracer("otlp.service", "1.0")


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        context = propagate.extract(self.headers)
        with tracer.start_as_current_span(f"GET {self.path}", context=context, kind=SpanKind.SERVER) as span:
            span.set_attribute("http.request.method", "GET")
            span.set_attribute("url.path", self.path)
            body = (self.headers.get("traceparent") or "none").encode()
            span.set_attribute("http.response.status_code", 200)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def stop(signum: int, frame: object) -> None:
    sys.exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, stop)
    server = ThreadingHTTPServer(("127.0.0.1", int(os.environ["APP_PORT"])), Handler)
    try:
        server.serve_forever()
    finally:
        provider.shutdown()

package dev.usertrace.opentelemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.logs.Severity;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;

/**
 * The end-to-end test's application: the SDK autoconfigured from its system
 * properties ({@code otel.traces.exporter=usertrace,seen}, the same for logs), a
 * request's spans and a log record in it
 * across two scopes, with attributes, an event, a link, an error status, and
 * one span too large for one event. Waits for the recorder first, as an
 * application started under {@code usertrace record} may run before it listens.
 */
public final class AutoconfiguredApp {
    public static void main(String[] args) throws Exception {
        RecorderListening.await();
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.initialize().getOpenTelemetrySdk();
        Tracer web = sdk.getTracer("shop.web", "2.1");
        Tracer db = sdk.getTracer("shop.db");
        Span request = web.spanBuilder("GET /cart").setSpanKind(SpanKind.SERVER)
                .setAttribute("http.request.method", "GET").setAttribute("http.route", "/cart").startSpan();
        try (Scope s = request.makeCurrent()) {
            Span query = db.spanBuilder("SELECT cart").setSpanKind(SpanKind.CLIENT)
                    .setAttribute("db.system.name", "postgresql").setAttribute(AttributeKey.longKey("db.rows"), 3L)
                    .addLink(request.getSpanContext(), Attributes.of(AttributeKey.stringKey("why"), "test"))
                    .startSpan();
            query.addEvent("rows read", Attributes.of(AttributeKey.longKey("n"), 3L));
            query.setStatus(StatusCode.ERROR, "deadlock");
            query.end();
            sdk.getLogsBridge().get("shop.web").logRecordBuilder().setSeverity(Severity.WARN).setSeverityText("WARN")
                    .setBody("cart 42 locked").setAttribute(AttributeKey.longKey("cart.id"), 42L).emit();
            Span big = web.spanBuilder("render").setAttribute("html", "x".repeat(20_000)).startSpan();
            big.end();
        }
        request.end();
        System.out.println("trace=" + request.getSpanContext().getTraceId());
        sdk.close();
    }
}

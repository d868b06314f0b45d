package dev.usertrace.opentelemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.HashMap;
import java.util.Map;

/**
 * The sampler test's application: the SDK autoconfigured from its system
 * properties ({@code otel.traces.sampler=parentbased_usertrace},
 * {@code otel.traces.exporter=usertrace,seen}), a request span and a query
 * span in it; prints their ids, whether the request was recorded, and the
 * {@code traceparent} the query would send on. With the argument
 * {@code recorded} it first waits for the recorder it runs under.
 */
public final class SampledApp {
    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("recorded")) {
            RecorderListening.await();
        }
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.initialize().getOpenTelemetrySdk();
        Tracer web = sdk.getTracer("shop.web", "2.1");
        Span request = web.spanBuilder("GET /cart").setSpanKind(SpanKind.SERVER).startSpan();
        // Read now: an ended span no longer records, sampled or not.
        System.out.println("recording=" + request.isRecording());
        try (Scope s = request.makeCurrent()) {
            Span query = web.spanBuilder("SELECT cart").setSpanKind(SpanKind.CLIENT).startSpan();
            Map<String, String> headers = new HashMap<>();
            sdk.getPropagators().getTextMapPropagator().inject(Context.current().with(query), headers, Map::put);
            query.end();
            System.out.println("query=" + query.getSpanContext().getSpanId());
            System.out.println("traceparent=" + headers.get("traceparent"));
        }
        request.end();
        System.out.println("request=" + request.getSpanContext().getSpanId());
        System.out.println("trace=" + request.getSpanContext().getTraceId());
        sdk.close();
    }
}

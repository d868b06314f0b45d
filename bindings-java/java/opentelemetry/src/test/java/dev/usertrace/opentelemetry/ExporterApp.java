package dev.usertrace.opentelemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.internal.otlp.ResourceMarshaler;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.ByteArrayOutputStream;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * The recorded application of {@link ExporterEventsAreRecordedTest}: the SDK
 * with the exporter and a Resource set in code, a failed span and a child too
 * large for one event. Prints the ids, CLOCK_MONOTONIC before and after, the
 * exporter's drops, and the Resource as the SDK's OTLP marshaler encodes it.
 */
public final class ExporterApp {
    public static void main(String[] args) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        // Both events: a recorder may enable one a moment before the other.
        while (!Registration.spans().isEnabled() || !Registration.resources().isEnabled()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no recorder listened to " + Registration.provider() + "_otel_span and _otel_resource in 60 s");
            }
            Thread.sleep(20);
        }
        UsertraceSpanExporter exporter = new UsertraceSpanExporter();
        Resource resource = Resource.getDefault().merge(Resource.create(Attributes.of(
                AttributeKey.stringKey("service.name"), "shop-java", AttributeKey.longKey("shop.shard"), 7L)));
        SdkTracerProvider provider = SdkTracerProvider.builder().setResource(resource)
                .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
        Tracer tracer = provider.get("shop.web", "2.1");
        long before = System.nanoTime();
        Span outer = tracer.spanBuilder("GET /cart").startSpan();
        Span inner;
        try (Scope s = outer.makeCurrent()) {
            inner = tracer.spanBuilder("render").setAttribute("html", "x".repeat(20_000)).startSpan();
            inner.end();
        }
        outer.setStatus(StatusCode.ERROR, "card declined");
        outer.end();
        long after = System.nanoTime();
        provider.close();
        System.out.println("trace=" + outer.getSpanContext().getTraceId());
        System.out.println("outer=" + outer.getSpanContext().getSpanId());
        System.out.println("inner=" + inner.getSpanContext().getSpanId());
        System.out.println("before=" + before);
        System.out.println("after=" + after);
        System.out.println("dropped=" + exporter.dropped());
        ByteArrayOutputStream encoded = new ByteArrayOutputStream();
        ResourceMarshaler.create(resource).writeBinaryTo(encoded);
        System.out.println("resource=" + HexFormat.of().formatHex(encoded.toByteArray()));
    }
}

package dev.usertrace.opentelemetry;

import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A batch of finished spans as the SDK's own OTLP exporter would send them:
 * the SDK's marshaler writes the request, and each {@code Span} message of it
 * becomes one event, with its scope and readable fields read back from the
 * same bytes (as Python's exporter reads them from the SDK's encode_spans).
 */
final class OtlpSpans {
    private OtlpSpans() {}

    /** One span of the request: its readable fields and its {@code Span} message. */
    record Span(long startUnixNs, long endUnixNs, long traceIdHi, long traceIdLo, long spanId, long parentSpanId,
            String name, String scopeName, String scopeVersion, int statusCode, byte[] otlp) {}

    static List<Span> of(Collection<SpanData> batch) {
        List<Span> spans = new ArrayList<>(batch.size());
        // ExportTraceServiceRequest.resource_spans (1) → ScopeSpans (2) → Span (2).
        Protobuf request = new Protobuf(marshal(batch));
        while (request.next()) {
            if (request.field() == 1 && request.wireType() == Protobuf.LEN) {
                Protobuf resourceSpans = request.message();
                while (resourceSpans.next()) {
                    if (resourceSpans.field() == 2 && resourceSpans.wireType() == Protobuf.LEN) {
                        scopeSpans(resourceSpans.message(), spans);
                    }
                }
            }
        }
        return spans;
    }

    private static void scopeSpans(Protobuf scopeSpans, List<Span> into) {
        String[] scope = {"", ""};
        List<byte[]> messages = new ArrayList<>();
        while (scopeSpans.next()) {
            if (scopeSpans.wireType() != Protobuf.LEN) {
                continue;
            }
            if (scopeSpans.field() == 1) {
                scope = Scope.of(scopeSpans.message());
            } else if (scopeSpans.field() == 2) {
                messages.add(scopeSpans.bytes());
            }
        }
        for (byte[] message : messages) {
            into.add(span(message, scope[0], scope[1]));
        }
    }

    /** The readable fields of a {@code Span} message (see opentelemetry/proto/trace/v1/trace.proto). */
    static Span span(byte[] message, String scopeName, String scopeVersion) {
        long start = 0, end = 0, hi = 0, lo = 0, id = 0, parent = 0;
        int status = 0;
        String name = "";
        Protobuf p = new Protobuf(message);
        while (p.next()) {
            switch (p.field()) {
                case 1 -> { hi = p.traceIdHalf(0); lo = p.traceIdHalf(1); }
                case 2 -> id = p.id();
                case 4 -> parent = p.id();
                case 5 -> name = p.string();
                case 7 -> start = p.number();
                case 8 -> end = p.number();
                case 15 -> status = p.wireType() == Protobuf.LEN ? statusCode(p.message()) : status;
                default -> { }
            }
        }
        return new Span(start, end, hi, lo, id, parent, name, scopeName, scopeVersion, status, message);
    }

    /**
     * A {@code Status} message's {@code code} (3): OTLP's numbers (0 unset, 1
     * ok, 2 error) as the SDK's marshaler wrote them from {@code StatusCode},
     * so the readable field cannot disagree with the protobuf.
     */
    private static int statusCode(Protobuf status) {
        int code = 0;
        while (status.next()) {
            if (status.field() == 3 && status.wireType() == Protobuf.VARINT) {
                code = (int) status.number();
            }
        }
        return code;
    }

    private static byte[] marshal(Collection<SpanData> batch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            TraceRequestMarshaler.create(batch).writeBinaryTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException("usertrace: the SDK's OTLP marshaler failed", e);
        }
        return out.toByteArray();
    }
}

package dev.usertrace;

import dev.usertrace.internal.Native;
import java.lang.ref.Reference;
import java.util.Objects;

/**
 * The events an OpenTelemetry SDK's finished spans travel in:
 * {@code <provider>_otel_span} and {@code <provider>_otel_span_part}. The
 * format (readable ids and times, then the span's OTLP protobuf, cut in parts
 * when large) is the native core's; this class only hands the arguments over.
 * An exporter ({@code dev.usertrace:usertrace-opentelemetry}) makes one per
 * process.
 *
 * <p>Thread-safe. The native object is freed by a Cleaner once this is unreachable.
 */
public final class OtelSpans {
    private final String provider;
    private final long handle;

    private OtelSpans(String provider, long handle) {
        this.provider = provider;
        this.handle = handle;
    }

    /**
     * Declares and registers the provider's span events.
     *
     * @throws UsertraceException where usertrace cannot register them (no
     *     user_events and no shared memory, the native library did not load)
     *     or {@code provider} is not a valid name
     */
    public static OtelSpans register(String provider) {
        Objects.requireNonNull(provider, "provider");
        if (!Native.isLoaded()) {
            throw OtelLogs.unavailable(provider + "_otel_span");
        }
        long h = Native.otelSpans0(provider);
        OtelSpans spans = new OtelSpans(provider, h);
        Tracepoint.CLEANER.register(spans, () -> Native.otelSpansFree0(h));
        return spans;
    }

    /** Whether a recorder listens to the span events: one load. */
    public boolean isEnabled() {
        try {
            return Native.otelSpansEnabled0(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Writes one finished span: {@code otlp} is its OTLP protobuf {@code Span}
     * message, the rest its readable fields. Ids are unsigned in the bits of
     * a {@code long}; the trace id is its big-endian halves; a root has
     * {@code parentSpanId} 0. {@code startNs} is CLOCK_MONOTONIC (as
     * {@link System#nanoTime()} on Linux). {@code statusCode} is OTLP's
     * {@code Status.StatusCode} (0 unset, 1 ok, 2 error), the same as in
     * {@code otlp}: readable so that a flight recorder's trigger can fire on
     * a failed span.
     *
     * @return how many events were written: 0 while nobody listens, more than
     *     1 for a span cut in parts
     * @throws UsertraceException if the span could not be written (too large,
     *     the kernel refused)
     */
    public int emit(long startNs, long durationNs, long traceIdHi, long traceIdLo, long spanId, long parentSpanId,
            String name, String scopeName, String scopeVersion, int statusCode, byte[] otlp) {
        try {
            return Native.otelSpanEmit0(handle, startNs, durationNs, traceIdHi, traceIdLo, spanId, parentSpanId,
                    Objects.requireNonNull(name, "name"), Objects.requireNonNull(scopeName, "scopeName"),
                    Objects.requireNonNull(scopeVersion, "scopeVersion"), statusCode,
                    Objects.requireNonNull(otlp, "otlp"));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        return "OtelSpans[" + provider + "_otel_span]";
    }
}

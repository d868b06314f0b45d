package dev.usertrace;

import dev.usertrace.internal.Native;
import java.lang.ref.Reference;
import java.util.Objects;

/**
 * The events an OpenTelemetry SDK's log records travel in:
 * {@code <provider>_otel_log} and {@code <provider>_otel_log_part}, defined by
 * the native core as {@link OtelSpans}' are.
 *
 * <p>Thread-safe. The native object is freed by a Cleaner once this is unreachable.
 */
public final class OtelLogs {
    private final String provider;
    private final long handle;

    private OtelLogs(String provider, long handle) {
        this.provider = provider;
        this.handle = handle;
    }

    /**
     * Declares and registers the provider's log record events.
     *
     * @throws UsertraceException where usertrace cannot register them, or
     *     {@code provider} is not a valid name
     */
    public static OtelLogs register(String provider) {
        Objects.requireNonNull(provider, "provider");
        if (!Native.isLoaded()) {
            throw unavailable(provider + "_otel_log");
        }
        long h = Native.otelLogs0(provider);
        OtelLogs logs = new OtelLogs(provider, h);
        Tracepoint.CLEANER.register(logs, () -> Native.otelLogsFree0(h));
        return logs;
    }

    /** Whether a recorder listens to the log events: one load. */
    public boolean isEnabled() {
        try {
            return Native.otelLogsEnabled0(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Writes one log record: {@code otlp} is its OTLP protobuf
     * {@code LogRecord} message; the trace and span ids (0: in no span) and
     * severity number are its readable fields, {@code body} its body as text.
     *
     * @return how many events were written (0 while nobody listens)
     * @throws UsertraceException if the record could not be written
     */
    public int emit(long traceIdHi, long traceIdLo, long spanId, int severityNumber, String body, String scopeName,
            String scopeVersion, byte[] otlp) {
        try {
            return Native.otelLogEmit0(handle, traceIdHi, traceIdLo, spanId, severityNumber,
                    Objects.requireNonNull(body, "body"), Objects.requireNonNull(scopeName, "scopeName"),
                    Objects.requireNonNull(scopeVersion, "scopeVersion"), Objects.requireNonNull(otlp, "otlp"));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        return "OtelLogs[" + provider + "_otel_log]";
    }

    /** Why nothing can register: the native library did not load. */
    static UsertraceException unavailable(String event) {
        Throwable why = Native.loadError();
        return new UsertraceException(ErrorKind.UNAVAILABLE, "cannot register " + event + ": " + why.getMessage(), why);
    }
}

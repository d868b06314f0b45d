package dev.usertrace.internal;

import java.nio.ByteBuffer;

/**
 * The native methods of the JNI library ({@code bindings-java/src/}). Not API:
 * the public classes validate arguments, then call these, which throw
 * {@code UsertraceException} (with the shared error code) on failure.
 *
 * <p>A handle is the address of a Rust {@code DynamicTracepoint}; see
 * {@code Tracepoint} for who frees it, and when.
 */
public final class Native {
    /** Must equal the library's {@code ABI_VERSION}; checked at load. */
    static final int ABI_VERSION = 6;

    private static final Throwable LOAD_ERROR = NativeLoader.load();

    private Native() {}

    /** Whether the library loaded; if not, usertrace is a no-op (see {@link #loadError()}). */
    public static boolean isLoaded() {
        return LOAD_ERROR == null;
    }

    /** Why the library did not load (naming every place searched), or null. */
    public static Throwable loadError() {
        return LOAD_ERROR;
    }

    static native int abiVersion0();

    /** {@code "<availability code>\t<message>"}. */
    public static native String status0();

    /**
     * {@code {name, reason, sentence}} of the core's transport choice; throws
     * {@code UsertraceException} (UNAVAILABLE) for an invalid {@code USERTRACE_TRANSPORT}.
     */
    public static native String[] transport0();

    /** Throws {@code UsertraceException} (INVALID_NAME) unless {@code name} is a valid {@code what} name. */
    public static native void checkName0(String what, String name);

    /**
     * Checks the definition {@code <provider>_<event>} (names, field count and
     * types, {@code char[N]} bounds, format length) and makes the native
     * tracepoint, unregistered. {@code kind}: 0 an event, 1 a span's begin
     * event, 2 the provider's {@code span_end} event, 3 a completed span; the
     * library adds the span fields, the arrays hold the event's own only.
     * Types are {@code FieldType} codes; lengths the N of each {@code char[N]}, else 0.
     */
    public static native long create0(String provider, String event, int kind, String[] fieldNames, int[] fieldTypes,
            int[] fieldLengths, boolean multiFormat, boolean persist);

    public static native void register0(long handle);

    public static native void unregister0(long handle);

    public static native boolean isRegistered0(long handle);

    /** A view of the 4-byte enable word; valid until {@link #free0(long)}. */
    public static native ByteBuffer enableWord0(long handle);

    public static native long bufferAddress0(ByteBuffer directBuffer);

    /** Emits the {@code length} encoded bytes at {@code address} (see EventWriter). */
    public static native void emit0(long handle, long address, int length);

    /** Checks the encoded values as an emit would, enabled or not; writes nothing. */
    public static native void validate0(long handle, long address, int length);

    /**
     * Begins a span on a span's begin event: the library takes a new id and
     * emits it before the span's own values, encoded at {@code address}.
     * Returns the id (unsigned), or 0 if nobody listens (nothing emitted).
     */
    public static native long beginSpan0(long handle, long address, int length);

    /**
     * Begins a span under the parent in {@code context} (trace id high, low,
     * span id, flags; zeros for a new trace) and writes the span's own
     * context there. Returns the id, or 0 if nobody listens (nothing emitted).
     */
    public static native long beginSpanIn0(long handle, long address, int length, long[] context);

    /**
     * Reads a traceparent (and a tracestate, or null) by the core's rules into
     * {@code out} (zeros for no context); returns the tracestate kept ("" for none).
     */
    public static native String parseTraceparent0(String traceparent, String tracestate, long[] out);

    /** The traceparent header value of {@code context}. */
    public static native String traceparent0(long[] context);

    /** Checks a span's own values as {@link #beginSpan0} would, enabled or not. */
    public static native void validateSpanBegin0(long handle, long address, int length);

    /** Ends span {@code id} on a provider's {@code span_end} event; nothing for 0. */
    public static native void endSpan0(long handle, long id);

    /** The span convention's names: span_begin, span_end (field), span_end (event), span_start_ns, span_duration_ns. */
    public static native String[] spanNames0();

    /** Unregisters if needed and frees; exactly once per handle. */
    public static native void free0(long handle);

    /** The core's field types: {@code "<code>\t<declared name>\t<name in messages>"}, in code order. */
    public static native String[] fieldTypes0();

    /** The core's error kinds: {@code "<code>\t<NAME>"}, in code order. */
    public static native String[] errorKinds0();

    /** The core's availabilities: {@code "<code>\t<name>"}, in code order. */
    public static native String[] availabilities0();

    /**
     * Declares and registers {@code <provider>_otel_span} and its part event
     * (the core's {@code usertrace::otel_span}); throws {@code UsertraceException}
     * where usertrace cannot. Returns the handle, freed by {@link #otelSpansFree0(long)}.
     */
    public static native long otelSpans0(String provider);

    public static native boolean otelSpansEnabled0(long handle);

    /**
     * Writes one finished span, its OTLP {@code Span} protobuf in {@code otlp}, in
     * parts if large; ids are unsigned. Returns how many events were written.
     */
    public static native int otelSpanEmit0(long handle, long startNs, long durationNs, long traceIdHi, long traceIdLo,
            long spanId, long parentSpanId, String name, String scopeName, String scopeVersion, int statusCode,
            byte[] otlp);

    public static native void otelSpansFree0(long handle);

    /** As {@link #otelSpans0(String)}, for {@code <provider>_otel_log}. */
    public static native long otelLogs0(String provider);

    public static native boolean otelLogsEnabled0(long handle);

    /** Writes one log record, its OTLP {@code LogRecord} protobuf in {@code otlp}; returns how many events. */
    public static native int otelLogEmit0(long handle, long traceIdHi, long traceIdLo, long spanId, int severityNumber,
            String body, String scopeName, String scopeVersion, byte[] otlp);

    public static native void otelLogsFree0(long handle);

    /**
     * The process's {@code <provider>_otel_resource} (the core's
     * {@code usertrace::otel_resource}), shared by its exporters; throws
     * {@code UsertraceException} where usertrace cannot. Returns the handle,
     * freed by {@link #otelResourcesFree0(long)}.
     */
    public static native long otelResources0(String provider);

    public static native boolean otelResourcesEnabled0(long handle);

    /** Writes the resource, its OTLP {@code Resource} protobuf in {@code otlp}, if due; returns whether it wrote. */
    public static native boolean otelResourceEmit0(long handle, String serviceName, byte[] otlp);

    public static native void otelResourcesFree0(long handle);
}

package dev.usertrace;

import dev.usertrace.internal.Native;

import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * A W3C trace context: the trace id, the span id that the next service's
 * span names as its parent, the trace flags and the {@code tracestate}.
 * The rules for reading and writing the headers are the core's; a
 * malformed, all-zero or over-long {@code traceparent} is no context
 * ({@code null}), never an exception in a request's path.
 *
 * <pre>{@code
 * TraceContext incoming = TraceContext.extract(exchange.getRequestHeaders()::getFirst);
 * try (Span handle = HANDLE.beginIn(incoming, requestId); // the caller's trace, or a new one
 *      Scope inner = handle.makeCurrent()) {
 *     Map<String, String> headers = new HashMap<>();
 *     TraceContext.injectCurrent(headers::put);         // handle's traceparent
 * }
 * }</pre>
 */
public final class TraceContext {
    /** The header that carries the trace and parent ids. */
    public static final String TRACEPARENT = "traceparent";
    /** The header that carries vendors' entries. */
    public static final String TRACESTATE = "tracestate";

    private static final ThreadLocal<TraceContext> CURRENT = new ThreadLocal<>();

    // Trace id high, low; span id; flags: as the core takes them.
    private final long[] words;
    private final String tracestate;

    TraceContext(long[] words, String tracestate) {
        this.words = words;
        this.tracestate = tracestate == null || tracestate.isEmpty() ? null : tracestate;
    }

    /** The context a {@code traceparent} header value gives; null for none. */
    public static TraceContext fromTraceparent(String traceparent) {
        return fromTraceparent(traceparent, null);
    }

    /**
     * The context of a {@code traceparent} with its {@code tracestate} (null
     * for none; an invalid one is dropped); null without a valid traceparent.
     */
    public static TraceContext fromTraceparent(String traceparent, String tracestate) {
        // Without the native library (not Linux) nothing is recorded, and
        // no header can be read by the core's rules: no context.
        if (traceparent == null || !Native.isLoaded()) {
            return null;
        }
        long[] words = new long[4];
        String kept = Native.parseTraceparent0(traceparent, tracestate, words);
        return words[0] == 0 && words[1] == 0 ? null : new TraceContext(words, kept);
    }

    /** The context of a request whose headers {@code header} looks up by name; null for none. */
    public static TraceContext extract(Function<String, String> header) {
        return fromTraceparent(header.apply(TRACEPARENT), header.apply(TRACESTATE));
    }

    /** The context of a request's headers, names matched without regard to case; null for none. */
    public static TraceContext extract(Map<String, String> headers) {
        String traceparent = null;
        String tracestate = null;
        for (Map.Entry<String, String> e : headers.entrySet()) {
            if (TRACEPARENT.equalsIgnoreCase(e.getKey())) {
                traceparent = e.getValue();
            } else if (TRACESTATE.equalsIgnoreCase(e.getKey())) {
                tracestate = e.getValue();
            }
        }
        return fromTraceparent(traceparent, tracestate);
    }

    /** Writes {@code traceparent} (and {@code tracestate}, if it carries one) with {@code setter}. */
    public void inject(BiConsumer<String, String> setter) {
        setter.accept(TRACEPARENT, traceparent());
        if (tracestate != null) {
            setter.accept(TRACESTATE, tracestate);
        }
    }

    /** Writes {@code traceparent} (and {@code tracestate}) into an outgoing request's headers. */
    public void inject(Map<String, String> headers) {
        inject(headers::put);
    }

    /**
     * Writes the {@link #current()} context's {@code traceparent} (and
     * {@code tracestate}) with {@code setter}; nothing outside every trace (a
     * request that brought no context, to a span nobody records or begun in
     * none), where {@code current().inject(...)} would throw. Python's
     * {@code usertrace.inject(headers)}.
     */
    public static void injectCurrent(BiConsumer<String, String> setter) {
        TraceContext current = current();
        if (current != null) {
            current.inject(setter);
        }
    }

    /** {@link #injectCurrent(BiConsumer)} into an outgoing request's headers. */
    public static void injectCurrent(Map<String, String> headers) {
        injectCurrent(headers::put);
    }

    /** The {@code traceparent} header value. */
    public String traceparent() {
        return Native.traceparent0(words);
    }

    /** The trace id: 32 lowercase hex digits (as in {@link #traceparent()}). */
    public String traceId() {
        // "00-" trace id "-" span id "-" flags: the core's spelling, read
        // back rather than written a second time here.
        return traceparent().substring(3, 35);
    }

    /** The span id: 16 lowercase hex digits (as in {@link #traceparent()}). */
    public String spanId() {
        return traceparent().substring(36, 52);
    }

    /** Whether the caller records the trace (flag bit 0). */
    public boolean isSampled() {
        return (words[3] & 1) != 0;
    }

    /** The {@code tracestate} it carries, or null. */
    public String tracestate() {
        return tracestate;
    }

    /** A copy of the words, for a span begun under this context to overwrite with its own. */
    long[] words() {
        return words.clone();
    }

    /**
     * The context a span begun now on this thread continues: the one made
     * current by the innermost open {@link Scope}; null outside every scope.
     */
    public static TraceContext current() {
        return CURRENT.get();
    }

    /** Makes this context current on this thread until the scope closes. */
    public Scope makeCurrent() {
        return makeCurrent(this);
    }

    /** Makes {@code context} (null: none) current on this thread until the scope closes. */
    public static Scope makeCurrent(TraceContext context) {
        TraceContext before = CURRENT.get();
        CURRENT.set(context);
        return () -> CURRENT.set(before);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TraceContext other
                && java.util.Arrays.equals(words, other.words)
                && Objects.equals(tracestate, other.tracestate);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(words) * 31 + Objects.hashCode(tracestate);
    }

    @Override
    public String toString() {
        return "TraceContext[" + traceId() + "-" + spanId() + (tracestate == null ? "" : ", " + tracestate) + "]";
    }
}

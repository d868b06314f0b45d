package dev.usertrace;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An open span, begun by {@link SpanTracepoint#begin}; {@link #close()} ends it:
 * <pre>{@code
 * try (Span s = request.begin(path, status)) {
 *     ...
 * }
 * }</pre>
 *
 * <h2>Events</h2>
 * A span is two ordinary events linked by an id, the convention every
 * usertrace language writes (the native library builds them):
 * {@code <provider>_<name>(span_begin, fields...)} when it begins, and
 * {@code <provider>_span_end(span_end)} when it ends. The kernel timestamps
 * both. Nesting needs no field: on one thread, a span that begins inside
 * another and ends before it is its child.
 *
 * <h2>Threads</h2>
 * A span may end on another thread than the one that began it: hand it (or
 * its {@link #id()}, then {@link SpanTracepoint#end(long)}) over. It ends
 * once: a second close, from any thread, does nothing.
 *
 * <h2>Trace context</h2>
 * A span begun inside a {@link Scope} (say, the caller's context made current
 * with {@link TraceContext#makeCurrent}), or with
 * {@link SpanTracepoint#beginIn}, is in that W3C trace: its begin event
 * carries the trace id and its parent's span id, and {@link #context()} is
 * what to hand to the next service. {@link #makeCurrent()} makes it the
 * parent of the spans begun on this thread until the scope closes.
 *
 * <h2>While nobody listens</h2>
 * {@code begin} returns one shared inert span, allocating nothing; its id is
 * 0 and closing it emits nothing. Its {@link #context()} is the context it
 * was begun under, passed on unchanged, so that a service nobody records
 * does not cut the trace.
 */
public final class Span implements AutoCloseable {
    /** The first field of a span's begin event: the span's id (a test holds these names to the native library's). */
    public static final String BEGIN_FIELD = "span_begin";
    /** The field of {@code <provider>_span_end}: the id of the span it ends. */
    public static final String END_FIELD = "span_end";
    /** The event, under each provider, that ends its spans: {@code <provider>_span_end}. */
    public static final String END_EVENT = "span_end";
    /** The first field of a completed span ({@link Provider#completedSpan}): its start, CLOCK_MONOTONIC ns. */
    public static final String START_NS_FIELD = "span_start_ns";
    /** The second field of a completed span: its length in ns. */
    public static final String DURATION_NS_FIELD = "span_duration_ns";

    /** What begin returns while nobody listens: its context is the current one. */
    static final Span INERT = new Span(null, 0, null);

    private static final VarHandle ENDED;

    static {
        try {
            ENDED = MethodHandles.lookup().findVarHandle(Span.class, "ended", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The provider's span_end event; null for {@link #INERT}. */
    private final Tracepoint end;
    private final long id;
    /** Set once, by the close that ends the span (VarHandle CAS: one end per span). */
    @SuppressWarnings("unused")
    private volatile boolean ended;

    // The span's own context (begun under one), its parent's while nobody
    // listened (beginIn), or null: the current one then (INERT).
    private final TraceContext context;

    Span(Tracepoint end, long id, TraceContext context) {
        this.end = end;
        this.id = id;
        this.context = context;
    }

    /**
     * What to hand to the next service: the span's own trace context if it was
     * begun in a trace; while nobody listened, the context it was begun
     * under, unchanged; null if it is in no trace.
     */
    public TraceContext context() {
        return this == INERT ? TraceContext.current() : context;
    }

    /** Its {@link #context()}'s {@code traceparent} header value, or null. */
    public String traceparent() {
        TraceContext c = context();
        return c == null ? null : c.traceparent();
    }

    /** Makes its {@link #context()} current on this thread until the scope closes. */
    public Scope makeCurrent() {
        return TraceContext.makeCurrent(context());
    }

    /**
     * The span's id as its events carry it (a u64: read it with
     * {@link Long#toUnsignedString(long)}); 0 if the span was not begun
     * because nobody listened.
     */
    public long id() {
        return id;
    }

    /** Whether the span was begun, i.e. a tracer listened to its begin event. */
    public boolean isRecording() {
        return id != 0;
    }

    /**
     * Ends the span: emits {@code <provider>_span_end(span_end=id)} if a
     * tracer listens to it. Only the first close emits; closing the inert
     * span emits nothing.
     *
     * @throws UsertraceException the kernel refused the write
     */
    @Override
    public void close() {
        if (id != 0 && ENDED.compareAndSet(this, false, true)) {
            end.endSpan(id);
        }
    }

    @Override
    public String toString() {
        return id == 0 ? "Span[inert]" : "Span[" + Long.toUnsignedString(id) + (ended ? ", ended" : "") + "]";
    }
}

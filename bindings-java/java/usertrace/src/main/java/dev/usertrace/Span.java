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
 * <h2>While nobody listens</h2>
 * {@code begin} returns one shared inert span, allocating nothing; its id is
 * 0 and closing it emits nothing.
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

    /** What begin returns while nobody listens. */
    static final Span INERT = new Span(null, 0);

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

    Span(Tracepoint end, long id) {
        this.end = end;
        this.id = id;
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

package dev.usertrace;

/**
 * Writes a span's begin values, then begins it: from {@link SpanTracepoint#event()}.
 * The puts are {@link EventWriter}'s, with its checks; while nobody listened
 * when the event was started, this is a shared writer whose puts do nothing
 * and whose {@link #begin()} returns the inert span.
 */
public final class SpanWriter {
    /** The writer while nobody listens. */
    static final SpanWriter INERT = new SpanWriter(null);

    /** This thread's writer; null for {@link #INERT}. */
    private final EventWriter w;
    private SpanTracepoint span;

    SpanWriter(EventWriter w) {
        this.w = w;
    }

    SpanWriter of(SpanTracepoint span) {
        this.span = span;
        return this;
    }

    public SpanWriter put(long v) {
        if (w != null) {
            w.put(v);
        }
        return this;
    }

    public SpanWriter put(double v) {
        if (w != null) {
            w.put(v);
        }
        return this;
    }

    public SpanWriter put(float v) {
        if (w != null) {
            w.put(v);
        }
        return this;
    }

    public SpanWriter put(boolean v) {
        if (w != null) {
            w.put(v);
        }
        return this;
    }

    public SpanWriter put(String v) {
        if (w != null) {
            w.put(v);
        }
        return this;
    }

    public SpanWriter put(byte[] v) {
        if (w != null) {
            w.put(v);
        }
        return this;
    }

    /**
     * Begins the span (every field must have its value): emits its begin
     * event if a tracer still listens, and returns the span to close.
     *
     * @throws IllegalStateException another event was started on this thread since
     */
    public Span begin() {
        if (w == null) {
            return Span.INERT;
        }
        SpanTracepoint s = span;
        span = null;
        if (s == null || !w.isFor(s.beginEvent())) {
            throw new IllegalStateException("no span in progress on this thread: start one with span.event()"
                    + " (another event started on this thread since, or this span was begun already)");
        }
        return s.started(w);
    }
}

package dev.usertrace;

import java.util.List;

/**
 * A span of the event {@code <provider>_<name>}, with typed fields: make one
 * with {@link Provider#span}, then
 * <pre>{@code
 * SpanTracepoint request = provider.span("request", Field.string("path"), Field.u32("status"));
 * try (Span s = request.begin(path, 200)) { ... }                     // boxes its arguments while enabled, or:
 * try (Span s = request.event().put(path).put(200).begin()) { ... }  // allocates nothing but the Span
 * }</pre>
 * Beginning emits {@code <provider>_<name>(span_begin=ID, path, status)},
 * with a new id from the native library; {@link Span#close()} emits
 * {@code <provider>_span_end(span_end=ID)}. See {@link Span} for nesting,
 * threads, and what the events mean.
 *
 * <p>While nobody listens to the begin event, {@link #begin()} and
 * {@link #event()} are one {@link #isEnabled()} check each and return shared
 * inert objects (the varargs {@link #begin(Object...)} still makes its array
 * at the call site).
 */
public final class SpanTracepoint implements AutoCloseable {
    private final Tracepoint begin;
    private final Tracepoint end;

    SpanTracepoint(Tracepoint begin, Tracepoint end) {
        this.begin = begin;
        this.end = end;
    }

    /** Whether a tracer listens to the begin event: one read of its enable word. */
    public boolean isEnabled() {
        return begin.isEnabled();
    }

    /** Begins a span of a span without fields; the inert span while nobody listens. */
    public Span begin() {
        if (!begin.isEnabled()) {
            return Span.INERT;
        }
        return started(EventWriter.forThread().begin(begin));
    }

    /**
     * Begins a span with its values, in field order; the inert span, and no
     * check of the values, while nobody listens.
     *
     * @throws IllegalArgumentException a value does not suit its field (the message names it)
     * @throws UsertraceException       the event is too large for perf, or the kernel refused the write
     */
    public Span begin(Object... values) {
        if (!begin.isEnabled()) {
            return Span.INERT;
        }
        return started(EventWriter.forThread().begin(begin).putAll(values));
    }

    /**
     * Begins a span under {@code parent} (a context from another service or
     * process; null: a new trace), with its values in field order. While
     * nobody listens it emits nothing and returns an inert span whose
     * {@link Span#context()} is {@code parent}, unchanged.
     *
     * @throws IllegalArgumentException a value does not suit its field (the message names it)
     * @throws UsertraceException       the event is too large for perf, or the kernel refused the write
     */
    public Span beginIn(TraceContext parent, Object... values) {
        if (!begin.isEnabled()) {
            return parent == null ? Span.INERT : new Span(null, 0, parent);
        }
        return startedIn(parent, EventWriter.forThread().begin(begin).putAll(values));
    }

    /**
     * Starts a span's begin event on this thread's writer, which allocates
     * nothing: {@code span.event().put(a).put(b).begin()}. While nobody
     * listens it is a shared writer whose puts do nothing. As with
     * {@link Tracepoint#event()}, compute the values first.
     */
    public SpanWriter event() {
        if (!begin.isEnabled()) {
            return SpanWriter.INERT;
        }
        EventWriter w = EventWriter.forThread();
        w.begin(begin);
        return w.spanWriter(this);
    }

    /**
     * Ends the span with this id (from {@link Span#id()}), for a span handed
     * to another thread by its id; nothing for 0. End each span once: the
     * {@link Span} object, unlike its id, keeps track of that.
     */
    public void end(long id) {
        end.endSpan(id);
    }

    /** Checks a span's values as begin would, whether or not a tracer listens; emits nothing. */
    public void validate(Object... values) {
        EventWriter.forThread().begin(begin).putAll(values).check();
    }

    /**
     * Begins the span whose values {@code w} holds: in the current trace
     * context if one is current on this thread, else by id alone (its begin
     * event says nothing of its trace, and nests by thread as before).
     */
    Span started(EventWriter w) {
        TraceContext current = TraceContext.current();
        if (current != null) {
            return startedIn(current, w);
        }
        long id = w.beginSpan();
        return id == 0 ? Span.INERT : new Span(end, id, null);
    }

    private Span startedIn(TraceContext parent, EventWriter w) {
        long[] words = parent == null ? new long[4] : parent.words();
        long id = w.beginSpanIn(words);
        if (id == 0) {
            return parent == null ? Span.INERT : new Span(null, 0, parent);
        }
        return new Span(end, id, new TraceContext(words, parent == null ? null : parent.tracestate()));
    }

    Tracepoint beginEvent() {
        return begin;
    }

    /** The begin event's name, e.g. {@code myapp_request}. */
    public String name() {
        return begin.name();
    }

    /** The span's own fields (the begin event carries {@code span_begin} before them). */
    public List<Field> fields() {
        return begin.fields();
    }

    /** Why the last registration failed (UNAVAILABLE without user_events), or null. */
    public UsertraceException registrationError() {
        return begin.registrationError();
    }

    /** Whether the kernel knows the begin event now. */
    public boolean isRegistered() {
        return begin.isRegistered();
    }

    /**
     * Unregisters the begin event: no span of it begins from now on. Spans
     * already begun still end: the provider's {@code span_end} event closes
     * with the provider.
     */
    @Override
    public void close() {
        begin.close();
    }

    @Override
    public String toString() {
        return "SpanTracepoint[" + begin.name() + " " + begin.fields() + (begin.isClosed() ? ", closed" : "") + "]";
    }
}

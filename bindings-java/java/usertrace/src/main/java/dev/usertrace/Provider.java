package dev.usertrace;

import dev.usertrace.internal.Native;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A name prefix for a group of tracepoints: {@code new Provider("myapp").tracepoint("request", ...)}
 * is the event {@code myapp_request}. Closing the provider closes every
 * tracepoint it made (each can also be closed alone, or is cleaned when
 * unreachable).
 */
public final class Provider implements AutoCloseable {
    /**
     * How the kernel registers the provider's events.
     *
     * @param multiFormat {@code USER_EVENT_REG_MULTI_FORMAT}: the same name may carry other fields
     *                    (Linux 6.10+; falls back to a normal registration before)
     * @param persist     {@code USER_EVENT_REG_PERSIST}: the event outlives this process; needs CAP_PERFMON
     */
    public record Options(boolean multiFormat, boolean persist) {
        public static final Options DEFAULT = new Options(false, false);
    }

    private final String name;
    private final Options options;
    private final List<WeakReference<Tracepoint>> tracepoints = new ArrayList<>();
    private boolean closed;
    /** Guarded by {@link #tracepoints}; strong, as open spans end on it. */
    private Tracepoint spanEnd;

    public Provider(String name) {
        this(name, Options.DEFAULT);
    }

    /** @throws UsertraceException {@link ErrorKind#INVALID_NAME} unless {@code name} is {@code [A-Za-z0-9_]+} */
    public Provider(String name, Options options) {
        Objects.requireNonNull(name, "provider name");
        if (Native.isLoaded()) {
            Native.checkName0("provider", name);
        }
        this.name = name;
        this.options = Objects.requireNonNull(options, "options");
    }

    public String name() {
        return name;
    }

    /**
     * Defines {@code <provider>_<event>} with {@code fields} and registers it.
     * Without user_events it is returned disabled, with its {@link Tracepoint#registrationError()}.
     *
     * @throws UsertraceException a bad definition, with the native library's kind (INVALID_NAME,
     *                            DUPLICATE_FIELD, TOO_MANY_FIELDS, EMPTY_CHAR_ARRAY, INVALID_FORMAT),
     *                            or a registration the kernel refused for another reason than
     *                            unavailability (e.g. FIELDS_MISMATCH)
     */
    public Tracepoint tracepoint(String event, Field... fields) {
        Objects.requireNonNull(event, "event name");
        return track(new Tracepoint(name, event, Tracepoint.Kind.EVENT, fields, options));
    }

    /**
     * Defines the span {@code <provider>_<event>}, whose begin event carries
     * {@code span_begin} (the span's id) and then {@code fields}, and
     * registers it, with this provider's {@code <provider>_span_end} event
     * (see {@link SpanTracepoint}).
     *
     * @throws UsertraceException as {@link #tracepoint}
     */
    public SpanTracepoint span(String event, Field... fields) {
        Objects.requireNonNull(event, "event name");
        Tracepoint begin = track(new Tracepoint(name, event, Tracepoint.Kind.SPAN_BEGIN, fields, options));
        return new SpanTracepoint(begin, spanEnd());
    }

    /**
     * Defines a completed span {@code <provider>_<event>}: an event reported
     * after the fact (a GC pause), whose fields are {@code span_start_ns}
     * (its start, CLOCK_MONOTONIC ns, the clock of {@link System#nanoTime()}
     * on Linux) and {@code span_duration_ns}, then {@code fields}. Emit it as
     * any tracepoint, the two first: {@code tp.emit(startNs, durationNs, ...)}.
     *
     * @throws UsertraceException as {@link #tracepoint}
     */
    public Tracepoint completedSpan(String event, Field... fields) {
        Objects.requireNonNull(event, "event name");
        return track(new Tracepoint(name, event, Tracepoint.Kind.COMPLETED_SPAN, fields, options));
    }

    /** This provider's {@code <provider>_span_end}, made with its first span. */
    private Tracepoint spanEnd() {
        synchronized (tracepoints) {
            if (spanEnd == null) {
                spanEnd = track(new Tracepoint(name, Span.END_EVENT, Tracepoint.Kind.SPAN_END, new Field[0], options));
            }
            return spanEnd;
        }
    }

    private Tracepoint track(Tracepoint tp) {
        synchronized (tracepoints) {
            if (closed) {
                tp.close();
                throw new IllegalStateException("provider " + name + " is closed");
            }
            tracepoints.removeIf(r -> r.get() == null);
            tracepoints.add(new WeakReference<>(tp));
        }
        return tp;
    }

    /** Closes (unregisters) every tracepoint of this provider; throws the first failure after trying all. */
    @Override
    public void close() {
        List<WeakReference<Tracepoint>> all;
        synchronized (tracepoints) {
            closed = true;
            all = new ArrayList<>(tracepoints);
            tracepoints.clear();
        }
        RuntimeException first = null;
        for (WeakReference<Tracepoint> ref : all) {
            Tracepoint tp = ref.get();
            if (tp == null) {
                continue;
            }
            try {
                tp.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "Provider[" + name + "]";
    }
}

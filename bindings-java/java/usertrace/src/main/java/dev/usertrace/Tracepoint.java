package dev.usertrace;

import dev.usertrace.internal.EnableWord;
import dev.usertrace.internal.Native;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A user_events tracepoint. Make one with {@link Provider#tracepoint}; then
 * <pre>{@code
 * if (request.isEnabled()) {
 *     request.emit(path, status, micros);                       // boxes its arguments, or:
 *     request.event().put(path).put(status).put(micros).emit(); // allocates nothing
 * }
 * }</pre>
 *
 * <h2>The enable word</h2>
 * The kernel sets a bit in a 4-byte word of this process while any tracer
 * (ftrace, perf, {@code usertrace record}) listens. {@link #isEnabled()}
 * reads that word in place, with no JNI call, by its raw address: through
 * {@code sun.misc.Unsafe} on JDK 17 to 23, through one constant
 * MemorySegment on JDK 24+, where Unsafe would warn (see
 * {@code internal.EnableWord}).
 *
 * <h2>Lifetime</h2>
 * The word lives in the native tracepoint object. {@link #close()}
 * unregisters it: the kernel clears the bit and never writes the word again,
 * so it reads 0 from then on, at the same (final) address. Close frees
 * nothing: the native object is freed by a {@link Cleaner} once the
 * {@code EnableWord} that reads it is unreachable, so no thread can read
 * freed memory, and the kernel, whose writes end at unregistration, never
 * writes into it either. A tracepoint never closed is unregistered and freed
 * by the same Cleaner. Closing while another thread emits is safe: that emit
 * is written or dropped, never torn.
 *
 * <h2>Without user_events</h2>
 * Creation succeeds; the tracepoint stays disabled; {@link #registrationError()}
 * says why and {@link #register()} retries (and throws).
 */
public final class Tracepoint implements AutoCloseable {
    /** Most fields one event may have: the native library's limit (a test holds it to it). */
    public static final int MAX_FIELDS = 32;

    // Package-private: OtelSpans and OtelLogs free their handles on the same thread.
    static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "usertrace-cleaner");
        t.setDaemon(true);
        return t;
    });

    /**
     * What the native library defines (the span convention's fields are its
     * to add). Java writes the values of {@link #fields}: all of the event's
     * but a span begin event's {@code span_begin} id, which the library
     * takes from the core and puts in front.
     */
    enum Kind {
        EVENT(0),
        SPAN_BEGIN(1),
        SPAN_END(2),
        COMPLETED_SPAN(3);

        final int code;

        Kind(int code) {
            this.code = code;
        }

        /** The fields Java writes values for, given the event's own. */
        Field[] written(Field[] own) {
            switch (this) {
                case SPAN_END:
                    return new Field[] {Field.u64(Span.END_FIELD)};
                case COMPLETED_SPAN: {
                    Field[] all = new Field[own.length + 2];
                    all[0] = Field.u64(Span.START_NS_FIELD);
                    all[1] = Field.u64(Span.DURATION_NS_FIELD);
                    System.arraycopy(own, 0, all, 2, own.length);
                    return all;
                }
                default:
                    return own;
            }
        }
    }

    private final String name;
    private final Kind kind;
    private final Field[] fields;
    /** The native object, or 0 in no-op mode. Valid while {@link #word} is reachable. */
    final long handle;
    /**
     * The native word, or {@link EnableWord#zero()} in no-op mode: what
     * isEnabled() reads on {@link EnableWord.Route#BUFFER}, and on every route
     * what keeps the word alive, as the Cleaner frees the native object once
     * this is unreachable. Final, like {@link #wordAddress}: close() relies on
     * the kernel clearing the bit instead of swapping words.
     */
    private final EnableWord word;
    /**
     * {@code word.address()}, read by isEnabled() on {@link EnableWord.Route#UNSAFE}
     * and {@link EnableWord.Route#SEGMENT}: one field load, then the word,
     * instead of loading the EnableWord and then its address. Valid while {@link #word}, and so this, is reachable.
     */
    private final long wordAddress;
    /** Constant once compiled: the branch not taken in isEnabled() is never compiled in. */
    private static final boolean READ_BY_ADDRESS = EnableWord.route() != EnableWord.Route.BUFFER;
    private volatile boolean closed;
    private volatile UsertraceException registrationError;

    /**
     * The native library checks the definition (names, field count, {@code char[N]}
     * bounds, format length), as it does for every binding; without the
     * library there is nothing to check against, and nothing is registered.
     */
    Tracepoint(String provider, String event, Kind kind, Field[] fields, Provider.Options options) {
        this.name = provider + "_" + event;
        this.kind = kind;
        Field[] own = Objects.requireNonNull(fields, "fields").clone();
        for (int i = 0; i < own.length; i++) {
            Objects.requireNonNull(own[i], "field " + i + " of event " + name);
        }
        this.fields = kind.written(own);
        if (!Native.isLoaded()) {
            handle = 0;
            word = EnableWord.zero();
            wordAddress = word.address();
            registrationError = unavailable();
            return;
        }
        String[] names = new String[own.length];
        int[] types = new int[own.length];
        int[] lengths = new int[own.length];
        for (int i = 0; i < names.length; i++) {
            names[i] = own[i].name();
            types[i] = own[i].type().code();
            lengths[i] = own[i].length();
        }
        long h = Native.create0(provider, event, kind.code, names, types, lengths, options.multiFormat(),
                options.persist());
        EnableWord w;
        try {
            ByteBuffer view = Native.enableWord0(h);
            w = EnableWord.of(view);
        } catch (RuntimeException | Error e) {
            Native.free0(h);
            throw e;
        }
        handle = h;
        word = w;
        wordAddress = w.address();
        CLEANER.register(w, new Free(h));
        try {
            Native.register0(h);
        } catch (UsertraceException e) {
            if (e.kind() != ErrorKind.UNAVAILABLE) {
                throw e; // the Cleaner frees the native object
            }
            registrationError = e;
        }
    }

    /** The Cleaner's action: holds the handle only, never the Tracepoint. */
    private static final class Free implements Runnable {
        private final long handle;

        Free(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            Native.free0(handle);
        }
    }

    /**
     * Whether a tracer listens: one read of the kernel-written word.
     *
     * <p>Each call really loads the word, so a loop that checks it is never
     * compiled into one that checked once, yet it needs no fence: on x86-64
     * it compiles to a plain load (see {@code internal.EnableWord}).
     */
    public boolean isEnabled() {
        boolean set = READ_BY_ADDRESS ? EnableWord.isSetAt(wordAddress) : word.isSet();
        // The Cleaner frees the word once `word` is unreachable, and this
        // holds it: keep this reachable until the load above is done.
        Reference.reachabilityFence(this);
        return set;
    }

    /**
     * Emits one event if a tracer listens; values in field order. Does
     * nothing, and checks nothing, while disabled ({@link #validate} always checks).
     *
     * @throws IllegalArgumentException a value does not suit its field (the message names it)
     * @throws UsertraceException       the event is too large for perf, or the kernel refused the write
     */
    public void emit(Object... values) {
        if (!isEnabled()) {
            return;
        }
        EventWriter.forThread().begin(this).putAll(values).emit();
    }

    /**
     * Starts an event on this thread's writer, which allocates nothing:
     * {@code tp.event().put(a).put(b).emit()}. Compute the values first: an
     * event started on the same thread before this one is emitted takes the
     * writer over, and this one's next put then throws IllegalStateException.
     */
    public EventWriter event() {
        return EventWriter.forThread().begin(this);
    }

    /**
     * Checks {@code values} against the fields, whether or not a tracer listens,
     * as an emit would (the native library's own check); emits nothing.
     *
     * @throws IllegalArgumentException a value does not suit its field (the message names it)
     * @throws UsertraceException       the event is too large for perf ({@link ErrorKind#PAYLOAD_TOO_LARGE})
     */
    public void validate(Object... values) {
        EventWriter.forThread().begin(this).putAll(values).check();
    }

    void write(EventWriter w, long address, int length) {
        if (kind == Kind.SPAN_BEGIN) {
            throw new IllegalStateException(name + " begins spans: begin one with SpanTracepoint.begin");
        }
        if (handle != 0 && isEnabled() && !closed) {
            Native.emit0(handle, address, length);
            // The word (and so the native object) must outlive the call.
            Reference.reachabilityFence(word);
        }
    }

    /** Begins a span with the values encoded at {@code address}; its id, or 0 if nothing was emitted. */
    long beginSpan(long address, int length) {
        if (handle != 0 && isEnabled() && !closed) {
            long id = Native.beginSpan0(handle, address, length);
            Reference.reachabilityFence(word);
            return id;
        }
        return 0;
    }

    /** Begins a span under {@code context}'s parent, writing the span's own context there; 0 if nothing was emitted. */
    long beginSpanIn(long address, int length, long[] context) {
        if (handle != 0 && isEnabled() && !closed) {
            long id = Native.beginSpanIn0(handle, address, length, context);
            Reference.reachabilityFence(word);
            return id;
        }
        return 0;
    }

    /** Ends span {@code id} on this {@code span_end} event; nothing for 0, or while disabled. */
    void endSpan(long id) {
        if (id != 0 && handle != 0 && isEnabled() && !closed) {
            Native.endSpan0(handle, id);
            Reference.reachabilityFence(word);
        }
    }

    void check(long address, int length) {
        if (handle != 0) {
            if (kind == Kind.SPAN_BEGIN) {
                Native.validateSpanBegin0(handle, address, length);
            } else {
                Native.validate0(handle, address, length);
            }
            Reference.reachabilityFence(word);
        }
    }

    /**
     * Registers with the kernel if not registered (again, after a failure).
     *
     * @throws UsertraceException why not, e.g. {@link ErrorKind#UNAVAILABLE}
     * @throws IllegalStateException when closed
     */
    public void register() {
        if (closed) {
            throw new IllegalStateException("tracepoint " + name + " is closed");
        }
        if (handle == 0) {
            throw unavailable();
        }
        try {
            Native.register0(handle);
            registrationError = null;
        } catch (UsertraceException e) {
            registrationError = e;
            throw e;
        } finally {
            Reference.reachabilityFence(word);
        }
    }

    /** Whether the kernel knows this tracepoint now. */
    public boolean isRegistered() {
        try {
            return handle != 0 && !closed && Native.isRegistered0(handle);
        } finally {
            Reference.reachabilityFence(word);
        }
    }

    /** Why the last registration failed (UNAVAILABLE without user_events), or null. */
    public UsertraceException registrationError() {
        return registrationError;
    }

    /**
     * Unregisters: from now on {@link #isEnabled()} is false (the kernel
     * clears the bit) and emits do nothing. Idempotent; safe while other threads use the tracepoint.
     *
     * @throws UsertraceException the kernel refused to unregister (the word is then never
     *         freed, and isEnabled() may go on reading a set bit; emits are still dropped)
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (handle != 0) {
            try {
                Native.unregister0(handle);
            } finally {
                Reference.reachabilityFence(word);
            }
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /** The full event name, e.g. {@code myapp_request}. */
    public String name() {
        return name;
    }

    public List<Field> fields() {
        return List.of(fields);
    }

    Field field(int i) {
        return fields[i];
    }

    int fieldCount() {
        return fields.length;
    }

    @Override
    public String toString() {
        return "Tracepoint[" + name + " " + Arrays.toString(fields) + (closed ? ", closed" : "") + "]";
    }

    private UsertraceException unavailable() {
        Throwable why = Native.loadError();
        return new UsertraceException(ErrorKind.UNAVAILABLE, "cannot register " + name + ": " + why.getMessage(), why);
    }
}

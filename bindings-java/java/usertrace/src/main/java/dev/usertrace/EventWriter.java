package dev.usertrace;

import dev.usertrace.internal.Native;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Writes one event's values, in field order, into this thread's direct
 * buffer, then hands the buffer's address to the native library, which
 * points the kernel's {@code writev} straight at it. Strings are encoded to
 * UTF-8 once, into the buffer; nothing else is copied on the Java or the
 * Rust side, and nothing is allocated.
 *
 * <p>Get one from {@link Tracepoint#event()}; each {@code put} takes the next
 * field's value and checks that it suits the field:
 * <ul>
 * <li>integer fields: {@code put(long)} (or any narrower integer), which must fit
 *     (u8 0..255, i16 -32768..32767, ...; u64 takes any long, read as unsigned);</li>
 * <li>f32/f64: {@code put(double)}, {@code put(float)} or an integer;</li>
 * <li>bool: {@code put(boolean)};</li>
 * <li>string: {@code put(String)}: no NUL inside; a lone surrogate becomes U+FFFD;</li>
 * <li>char[N]: {@code put(String)} or {@code put(byte[])} of at most N UTF-8 bytes;</li>
 * <li>bytes: {@code put(byte[])}.</li>
 * </ul>
 * A mismatch throws IllegalArgumentException naming the field and the event.
 * What Java alone knows is checked here: the Java type, and whether a
 * {@code long} fits before it is narrowed. The rest (a NUL in a string, a
 * {@code char[N]} too long, the payload's size) is the native library's
 * check, the one every binding shares: it runs in {@link #emit()} when the
 * tracepoint is enabled, and in {@link Tracepoint#validate} always.
 */
public final class EventWriter {
    /** perf's limit on one event's payload is 8184 bytes; a length word per field may be added. */
    static final int CAPACITY = 8184 + 4 * Tracepoint.MAX_FIELDS;

    private static final ThreadLocal<EventWriter> CURRENT = ThreadLocal.withInitial(EventWriter::new);

    private final ByteBuffer buf = ByteBuffer.allocateDirect(CAPACITY).order(ByteOrder.nativeOrder());
    private final long address = Native.isLoaded() ? Native.bufferAddress0(buf) : 0;
    private Tracepoint owner;
    private int next;
    /** This thread's span writer, which writes through this one. */
    private final SpanWriter spans = new SpanWriter(this);

    private EventWriter() {}

    static EventWriter forThread() {
        return CURRENT.get();
    }

    EventWriter begin(Tracepoint tp) {
        owner = tp;
        next = 0;
        buf.clear();
        return this;
    }

    /** Emits the event if its tracepoint is enabled; every field must have its value. */
    public void emit() {
        Tracepoint tp = finish();
        tp.write(this, address, buf.position());
    }

    /** Begins the span whose begin event this is; returns its id, or 0 if nothing was emitted. */
    long beginSpan() {
        Tracepoint tp = finish();
        return tp.beginSpan(address, buf.position());
    }

    /** Begins the span under {@code context}'s parent (see {@link Tracepoint#beginSpanIn}). */
    long beginSpanIn(long[] context) {
        Tracepoint tp = finish();
        return tp.beginSpanIn(address, buf.position(), context);
    }

    SpanWriter spanWriter(SpanTracepoint span) {
        return spans.of(span);
    }

    /** Whether the event in progress is {@code tp}'s. */
    boolean isFor(Tracepoint tp) {
        return owner == tp;
    }

    /** Checks the values as an emit would (see {@link Tracepoint#validate}); ends the event. */
    void check() {
        finish().check(address, buf.position());
    }

    /** Checks that every field got its value; ends the event. */
    Tracepoint finish() {
        Tracepoint tp = owner();
        owner = null;
        if (next != tp.fieldCount()) {
            throw new IllegalArgumentException(
                    "event " + tp.name() + " has " + tp.fieldCount() + " fields but " + next + " values were given");
        }
        return tp;
    }

    EventWriter putAll(Object[] values) {
        Tracepoint tp = owner();
        if (values == null || values.length != tp.fieldCount()) {
            owner = null;
            throw new IllegalArgumentException("event " + tp.name() + " has " + tp.fieldCount() + " fields but "
                    + (values == null ? 0 : values.length) + " values were given");
        }
        for (Object v : values) {
            if (v instanceof String) {
                put((String) v);
            } else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
                put(((Number) v).longValue());
            } else if (v instanceof Boolean) {
                put(((Boolean) v).booleanValue());
            } else if (v instanceof Double) {
                put(((Double) v).doubleValue());
            } else if (v instanceof Float) {
                put(((Float) v).floatValue());
            } else if (v instanceof byte[]) {
                put((byte[]) v);
            } else if (v instanceof Character) {
                put((long) ((Character) v).charValue());
            } else {
                Field f = nextField();
                throw mismatch(f, v == null ? "null" : "a " + v.getClass().getName());
            }
        }
        return this;
    }

    public EventWriter put(long v) {
        Field f = nextField();
        FieldType t = f.type();
        try {
            if (t.isInteger()) {
                if (v < t.min() || v > t.max()) {
                    throw mismatch(f, Long.toString(v), ", which does not fit (" + t.min() + ".." + t.max() + ")");
                }
                switch (t) {
                    case U8: case I8: buf.put((byte) v); break;
                    case U16: case I16: buf.putShort((short) v); break;
                    case U32: case I32: buf.putInt((int) v); break;
                    default: buf.putLong(v); break;
                }
            } else if (t == FieldType.F64) {
                buf.putDouble(v);
            } else if (t == FieldType.F32) {
                buf.putFloat(v);
            } else {
                throw mismatch(f, "an integer");
            }
        } catch (BufferOverflowException e) {
            throw tooLarge();
        }
        return this;
    }

    public EventWriter put(double v) {
        Field f = nextField();
        try {
            if (f.type() == FieldType.F64) {
                buf.putDouble(v);
            } else if (f.type() == FieldType.F32) {
                buf.putFloat((float) v);
            } else {
                throw mismatch(f, "a double");
            }
        } catch (BufferOverflowException e) {
            throw tooLarge();
        }
        return this;
    }

    public EventWriter put(float v) {
        return put((double) v);
    }

    public EventWriter put(boolean v) {
        Field f = nextField();
        if (f.type() != FieldType.BOOL) {
            throw mismatch(f, "a boolean");
        }
        try {
            buf.put((byte) (v ? 1 : 0));
        } catch (BufferOverflowException e) {
            throw tooLarge();
        }
        return this;
    }

    public EventWriter put(String s) {
        Field f = nextField();
        FieldType t = f.type();
        if (t != FieldType.STRING && t != FieldType.CHAR_ARRAY) {
            throw mismatch(f, "a String");
        }
        if (s == null) {
            throw mismatch(f, "null");
        }
        try {
            int lengthAt = buf.position();
            buf.putInt(0);
            int start = buf.position();
            encodeUtf8(s);
            buf.putInt(lengthAt, buf.position() - start);
        } catch (BufferOverflowException e) {
            throw tooLarge();
        }
        return this;
    }

    public EventWriter put(byte[] b) {
        Field f = nextField();
        FieldType t = f.type();
        if (t != FieldType.BYTES && t != FieldType.CHAR_ARRAY) {
            throw mismatch(f, "a byte[]");
        }
        if (b == null) {
            throw mismatch(f, "null");
        }
        try {
            buf.putInt(b.length);
            buf.put(b);
        } catch (BufferOverflowException e) {
            throw tooLarge();
        }
        return this;
    }

    private void encodeUtf8(String s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                buf.put((byte) c);
            } else if (c < 0x800) {
                buf.put((byte) (0xc0 | (c >> 6)));
                buf.put((byte) (0x80 | (c & 0x3f)));
            } else if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, s.charAt(++i));
                    buf.put((byte) (0xf0 | (cp >> 18)));
                    buf.put((byte) (0x80 | ((cp >> 12) & 0x3f)));
                    buf.put((byte) (0x80 | ((cp >> 6) & 0x3f)));
                    buf.put((byte) (0x80 | (cp & 0x3f)));
                } else {
                    // A lone surrogate has no UTF-8: write U+FFFD, as Python's binding does.
                    buf.put((byte) 0xef);
                    buf.put((byte) 0xbf);
                    buf.put((byte) 0xbd);
                }
            } else {
                buf.put((byte) (0xe0 | (c >> 12)));
                buf.put((byte) (0x80 | ((c >> 6) & 0x3f)));
                buf.put((byte) (0x80 | (c & 0x3f)));
            }
        }
    }

    private Tracepoint owner() {
        Tracepoint tp = owner;
        if (tp == null) {
            throw new IllegalStateException("no event in progress on this thread: start one with tracepoint.event()"
                    + " (another event started on this thread since, or this one was emitted already)");
        }
        return tp;
    }

    private Field nextField() {
        Tracepoint tp = owner();
        if (next >= tp.fieldCount()) {
            owner = null;
            throw new IllegalArgumentException("event " + tp.name() + " has " + tp.fieldCount()
                    + " fields but more values were given");
        }
        return tp.field(next++);
    }

    /** In the words of the native library's VALUE_MISMATCH: "field F of event E is T, but GOT was given". */
    private RuntimeException mismatch(Field f, String got) {
        return mismatch(f, got, "");
    }

    private RuntimeException mismatch(Field f, String got, String why) {
        return fail(new IllegalArgumentException("field " + f.name() + " of event " + owner.name() + " is "
                + (f.type() == FieldType.CHAR_ARRAY ? "char[" + f.length() + "]" : f.type().displayName())
                + ", but " + got + " was given" + why));
    }

    private RuntimeException tooLarge() {
        return fail(new UsertraceException(ErrorKind.PAYLOAD_TOO_LARGE, "event " + owner.name()
                + " would carry more than " + (CAPACITY - 4 * Tracepoint.MAX_FIELDS)
                + " bytes; perf records at most 8184 per event, so it was not written"));
    }

    /** Ends the event in progress: a failed event is never emitted. */
    private RuntimeException fail(RuntimeException e) {
        owner = null;
        return e;
    }
}

package dev.usertrace.opentelemetry;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A reader of the protobuf wire format, just enough to walk the OTLP request
 * the SDK's marshaler wrote down to its {@code Span} and {@code LogRecord}
 * messages and read their ids, times and names. The SDK keeps its generated
 * OTLP classes internal, so there is no message class to decode into.
 */
final class Protobuf {
    static final int VARINT = 0;
    static final int FIXED64 = 1;
    static final int LEN = 2;
    static final int FIXED32 = 5;

    private final byte[] bytes;
    private int at;
    private final int end;
    private int field;
    private int wireType;
    private long number;
    private int valueStart;
    private int valueEnd;

    Protobuf(byte[] bytes) {
        this(bytes, 0, bytes.length);
    }

    private Protobuf(byte[] bytes, int from, int end) {
        this.bytes = bytes;
        this.at = from;
        this.end = end;
    }

    /** Steps to the next field; false at the end of the message. */
    boolean next() {
        if (at >= end) {
            return false;
        }
        long tag = varint();
        field = (int) (tag >>> 3);
        wireType = (int) (tag & 7);
        switch (wireType) {
            case VARINT -> number = varint();
            case FIXED64 -> number = fixed(8);
            case FIXED32 -> number = fixed(4);
            case LEN -> {
                int len = (int) varint();
                if (len < 0 || len > end - at) {
                    throw new IllegalArgumentException("protobuf: field " + field + " runs past its message");
                }
                valueStart = at;
                valueEnd = at + len;
                at += len;
            }
            default -> throw new IllegalArgumentException("protobuf: wire type " + wireType + " of field " + field);
        }
        return true;
    }

    int field() {
        return field;
    }

    int wireType() {
        return wireType;
    }

    /** A varint or fixed field's value. */
    long number() {
        return number;
    }

    /** A length-delimited field's bytes. */
    byte[] bytes() {
        return Arrays.copyOfRange(bytes, valueStart, valueEnd);
    }

    String string() {
        return new String(bytes, valueStart, valueEnd - valueStart, StandardCharsets.UTF_8);
    }

    /** A reader of the length-delimited field's message. */
    Protobuf message() {
        return new Protobuf(bytes, valueStart, valueEnd);
    }

    /** The big-endian number in an id field of up to 8 bytes (0 if empty). */
    long id() {
        return id(valueStart, valueEnd);
    }

    /** The high (0) or low (1) 8 bytes of a 16-byte trace id field (0 if empty). */
    long traceIdHalf(int half) {
        if (valueEnd == valueStart) {
            return 0;
        }
        if (valueEnd - valueStart != 16) {
            throw new IllegalArgumentException("protobuf: a trace id of " + (valueEnd - valueStart) + " bytes");
        }
        return id(valueStart + 8 * half, valueStart + 8 * half + 8);
    }

    private long id(int from, int to) {
        if (to - from > 8) {
            throw new IllegalArgumentException("protobuf: an id of " + (to - from) + " bytes");
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            v = (v << 8) | (bytes[i] & 0xff);
        }
        return v;
    }

    private long varint() {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at >= end) {
                throw new IllegalArgumentException("protobuf: a varint runs past its message");
            }
            byte b = bytes[at++];
            v |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw new IllegalArgumentException("protobuf: a varint of more than 10 bytes");
    }

    private long fixed(int size) {
        if (end - at < size) {
            throw new IllegalArgumentException("protobuf: a fixed field runs past its message");
        }
        long v = 0;
        for (int i = size - 1; i >= 0; i--) {
            v = (v << 8) | (bytes[at + i] & 0xff);
        }
        at += size;
        return v;
    }
}

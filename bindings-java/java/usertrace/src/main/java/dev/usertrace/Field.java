package dev.usertrace;

import java.util.Objects;

/**
 * A named, typed field of an event: {@code Field.u32("status")},
 * {@code Field.string("path")}, {@code Field.charArray("comm", 16)}.
 * Names are {@code [A-Za-z0-9_]+}; the name, and N of {@code char[N]}, are
 * checked with the rest of the definition, by the native library, when the
 * tracepoint is made.
 *
 * @param name   the field's name
 * @param type   its type
 * @param length N of a {@code char[N]} field (1..1024), else 0
 */
public record Field(String name, FieldType type, int length) {
    /** Most characters of a {@code char[N]} field (a test holds it to the native library's). */
    public static final int MAX_CHAR_ARRAY = 1024;

    public Field {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        if (type != FieldType.CHAR_ARRAY && length != 0) {
            throw new IllegalArgumentException("field " + name + ": only char arrays have a length");
        }
        if (length < 0) {
            throw new IllegalArgumentException("field " + name + " is char[" + length + "]: a length is never negative");
        }
    }

    public Field(String name, FieldType type) {
        this(name, type, 0);
    }

    public static Field u8(String name) { return new Field(name, FieldType.U8); }
    public static Field u16(String name) { return new Field(name, FieldType.U16); }
    public static Field u32(String name) { return new Field(name, FieldType.U32); }
    public static Field u64(String name) { return new Field(name, FieldType.U64); }
    public static Field i8(String name) { return new Field(name, FieldType.I8); }
    public static Field i16(String name) { return new Field(name, FieldType.I16); }
    public static Field i32(String name) { return new Field(name, FieldType.I32); }
    public static Field i64(String name) { return new Field(name, FieldType.I64); }
    public static Field bool(String name) { return new Field(name, FieldType.BOOL); }
    public static Field f32(String name) { return new Field(name, FieldType.F32); }
    public static Field f64(String name) { return new Field(name, FieldType.F64); }
    public static Field string(String name) { return new Field(name, FieldType.STRING); }
    public static Field bytes(String name) { return new Field(name, FieldType.BYTES); }
    public static Field charArray(String name, int length) { return new Field(name, FieldType.CHAR_ARRAY, length); }
}

package dev.usertrace;

import java.util.Objects;

/**
 * A named, typed field of an event: {@code Field.u32("status")},
 * {@code Field.string("path")}, {@code Field.charArray("comm", 16)}.
 * Names are {@code [A-Za-z0-9_]+}.
 *
 * @param name   the field's name
 * @param type   its type
 * @param length N of a {@code char[N]} field (1..1024), else 0
 */
public record Field(String name, FieldType type, int length) {
    /** Most characters of a {@code char[N]} field. */
    public static final int MAX_CHAR_ARRAY = 1024;

    public Field {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        if (type == FieldType.CHAR_ARRAY) {
            if (length < 1 || length > MAX_CHAR_ARRAY) {
                throw new UsertraceException(ErrorKind.INVALID_FORMAT,
                        "field " + name + " is char[" + length + "]; the kernel allows char[1] to char[" + MAX_CHAR_ARRAY + "]");
            }
        } else if (length != 0) {
            throw new IllegalArgumentException("field " + name + ": only char arrays have a length");
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

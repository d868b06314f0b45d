package dev.usertrace;

/**
 * The type of one field, as the kernel declares it. Integer fields take Java
 * integers whose value fits ({@code U64} takes any {@code long}, read as
 * unsigned); {@code BOOL} is {@code unsigned char} 0/1; {@code F32}/{@code F64}
 * carry IEEE-754 bits; {@code STRING} is UTF-8 of any length
 * ({@code __rel_loc char[]}), {@code CHAR_ARRAY} a zero-padded {@code char[N]},
 * {@code BYTES} a byte array of any length ({@code __rel_loc u8[]}).
 */
public enum FieldType {
    U8(0, "u8"), U16(1, "u16"), U32(2, "u32"), U64(3, "u64"),
    I8(4, "i8"), I16(5, "i16"), I32(6, "i32"), I64(7, "i64"),
    BOOL(8, "bool"), F32(9, "f32"), F64(10, "f64"),
    CHAR_ARRAY(11, "char array"), STRING(12, "string"), BYTES(13, "bytes");

    private final int code;
    private final String displayName;

    FieldType(int code, String displayName) {
        this.code = code;
        this.displayName = displayName;
    }

    /** The code the native library knows this type by. */
    int code() {
        return code;
    }

    /** A short name for messages, e.g. {@code u16}. */
    public String displayName() {
        return displayName;
    }

    boolean isInteger() {
        return code <= I64.code;
    }

    /** Smallest value an integer field takes (U64: Long.MIN_VALUE, read as unsigned). */
    long min() {
        switch (this) {
            case I8: return Byte.MIN_VALUE;
            case I16: return Short.MIN_VALUE;
            case I32: return Integer.MIN_VALUE;
            case I64: case U64: return Long.MIN_VALUE;
            default: return 0;
        }
    }

    long max() {
        switch (this) {
            case U8: return 0xffL;
            case U16: return 0xffffL;
            case U32: return 0xffff_ffffL;
            case I8: return Byte.MAX_VALUE;
            case I16: return Short.MAX_VALUE;
            case I32: return Integer.MAX_VALUE;
            default: return Long.MAX_VALUE;
        }
    }
}

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
    U8(1, "u8", "u8"), U16(2, "u16", "u16"), U32(3, "u32", "u32"), U64(4, "u64", "u64"),
    I8(5, "i8", "i8"), I16(6, "i16", "i16"), I32(7, "i32", "i32"), I64(8, "i64", "i64"),
    BOOL(9, "bool", "bool"), F32(10, "f32", "f32"), F64(11, "f64", "f64"),
    CHAR_ARRAY(12, "char[N]", "char array"), STRING(13, "str", "string"), BYTES(14, "bytes", "bytes");

    private final int code;
    private final String declaredName;
    private final String displayName;

    FieldType(int code, String declaredName, String displayName) {
        this.code = code;
        this.declaredName = declaredName;
        this.displayName = displayName;
    }

    /**
     * The stable number of this type, the core's ({@code usertrace::FieldType::code}),
     * shared with C and Python; a test holds this enum to the native table.
     */
    public int code() {
        return code;
    }

    /** The name the type is declared by in Python and shown by {@code usertrace list}, e.g. {@code str}. */
    public String declaredName() {
        return declaredName;
    }

    /** A short name for messages, e.g. {@code u16}: the one the core's messages use. */
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

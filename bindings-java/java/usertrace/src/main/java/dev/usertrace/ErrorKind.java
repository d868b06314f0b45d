package dev.usertrace;

/**
 * Why an operation failed: the stable codes shared by every usertrace binding
 * (Rust {@code usertrace::ErrorKind}, C, Python). Never renumbered; a test
 * holds this enum to the native library's table.
 */
public enum ErrorKind {
    /** user_events cannot be used here (or the native library did not load); see {@link Usertrace#status()}. */
    UNAVAILABLE(1),
    /** An event, provider or field name is not {@code [A-Za-z0-9_]+}. */
    INVALID_NAME(2),
    /** A {@code char[N]} too large, or a format over 511 bytes. */
    INVALID_FORMAT(3),
    /** The name is registered with different fields. */
    FIELDS_MISMATCH(4),
    /** A value does not fit the field it was given for. */
    VALUE_MISMATCH(5),
    /** The event would exceed what perf can record. */
    PAYLOAD_TOO_LARGE(6),
    /** The kernel's limit on user events ({@code kernel.user_events_max}) is reached. */
    TOO_MANY_EVENTS(7),
    /** The operation needs a privilege (CAP_PERFMON for persist). */
    PERMISSION_DENIED(8),
    /** No event of that name exists. */
    UNKNOWN_EVENT(9),
    /** The event is still registered by some process. */
    EVENT_BUSY(10),
    /** The kernel refused for another reason; the message carries the errno. */
    KERNEL(11),
    /** Two fields of one event have the same name. */
    DUPLICATE_FIELD(12),
    /** An event declares more than {@link Tracepoint#MAX_FIELDS} fields. */
    TOO_MANY_FIELDS(13),
    /** A {@code char[0]} field, which can hold nothing. */
    EMPTY_CHAR_ARRAY(14),
    /** A field type the native library does not know. */
    UNKNOWN_FIELD_TYPE(15);

    private final int code;

    ErrorKind(int code) {
        this.code = code;
    }

    /** The stable number of this kind. */
    public int code() {
        return code;
    }

    /** The kind of {@code code}, or {@link #KERNEL} for a code this version does not know. */
    public static ErrorKind of(int code) {
        for (ErrorKind k : values()) {
            if (k.code == code) {
                return k;
            }
        }
        return KERNEL;
    }
}

package dev.usertrace;

/**
 * The event every Java logging bridge of usertrace writes: the agent's
 * java.util.logging handler, the Logback appender and the Log4j2 appender.
 * {@code <provider>_log} (by default {@code jvm_log}, beside the agent's
 * other {@code jvm_*} events) with these fields, in this order:
 *
 * <ul>
 *   <li>{@code time_ns} (u64): when the record was made, ns since the Unix epoch;
 *   <li>{@code level} (i32): on java.util.logging's scale ({@link java.util.logging.Level#intValue()});
 *   <li>{@code logger} (string): the logger's name;
 *   <li>{@code thread_id} (u64): the logging thread's Java id, 0 where unknown;
 *   <li>{@code message} (string): the formatted message;
 *   <li>{@code thrown} (string): the throwable's {@code toString()}, or empty.
 * </ul>
 *
 * <p>One definition, here, so that one {@code <provider>_log} carries the
 * records of every bridge in a JVM and a recorder reads them alike: the
 * kernel refuses a second registration of a name with other fields.
 */
public final class LogConvention {
    private LogConvention() {}

    /** The provider the bridges use unless told otherwise: the agent's. */
    public static final String DEFAULT_PROVIDER = "jvm";

    /** The event's name under its provider. */
    public static final String NAME = "log";

    private static final Field[] FIELDS = {
        Field.u64("time_ns"), Field.i32("level"), Field.string("logger"), Field.u64("thread_id"),
        Field.string("message"), Field.string("thrown"),
    };

    /** The fields, in order (a copy). */
    public static Field[] fields() {
        return FIELDS.clone();
    }

    /**
     * {@code s} as a string field holds it: a NUL (where user_events strings
     * end) becomes a space, and {@code null} the empty string.
     */
    public static String text(String s) {
        return s == null ? "" : s.replace('\0', ' ');
    }
}

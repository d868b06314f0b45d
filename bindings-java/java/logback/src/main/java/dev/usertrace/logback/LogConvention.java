package dev.usertrace.logback;

import dev.usertrace.Field;

/**
 * The event every Java logging bridge of usertrace writes: the agent's
 * java.util.logging handler ({@code dev.usertrace.agent.Events.LOG}), this
 * appender and the Log4j2 one. One definition, so that one {@code
 * <provider>_log} carries the records of all three, and a recorder reads them
 * alike; the kernel refuses a second registration of the name with other
 * fields. Copied here, as the agent's is not API (a test holds this copy to
 * the fields and their order).
 */
final class LogConvention {
    private LogConvention() {}

    /** The provider of the agent's events too, so that both write {@code jvm_log} by default. */
    static final String DEFAULT_PROVIDER = "jvm";

    static final String NAME = "log";

    /**
     * {@code time_ns}: when the event was made, ns since the Unix epoch;
     * {@code level}: on java.util.logging's scale ({@link java.util.logging.Level#intValue()});
     * {@code thread_id}: the Java thread id ({@code Thread.getId()}), 0 where unknown;
     * {@code thrown}: the throwable's {@code toString()}, or empty.
     */
    static final Field[] FIELDS = {
        Field.u64("time_ns"), Field.i32("level"), Field.string("logger"), Field.u64("thread_id"),
        Field.string("message"), Field.string("thrown"),
    };

    /** The string fields hold no NUL (user_events strings end at one), as the agent's handler writes them. */
    static String text(String s) {
        return s == null ? "" : s.replace('\0', ' ');
    }
}

package dev.usertrace.agent;

import dev.usertrace.Field;

/**
 * The events the agent emits, as {@code <provider>_<suffix>}. Public so that
 * tools (and tests) can register the same definitions before the agent runs,
 * to enable them in ftrace or perf in advance.
 *
 * <p>JFR delivers events in batches, about once a second, so every JFR event
 * carries its own {@code start_ns}: the JFR start time, in nanoseconds since
 * the Unix epoch. A record's perf/ftrace timestamp is when it was forwarded.
 */
public final class Events {
    private Events() {}

    /** jdk.GarbageCollection. */
    public static final String GC = "gc";
    public static final Field[] GC_FIELDS = {
        Field.u64("start_ns"), Field.u64("duration_ns"), Field.u32("gc_id"), Field.string("name"),
        Field.string("cause"), Field.u64("sum_of_pauses_ns"), Field.u64("longest_pause_ns"),
    };

    /** jdk.GCPhasePause. */
    public static final String GC_PAUSE = "gc_pause";
    public static final Field[] GC_PAUSE_FIELDS = {
        Field.u64("start_ns"), Field.u64("duration_ns"), Field.u32("gc_id"), Field.string("name"),
    };

    /** jdk.SafepointBegin (its duration spans the whole safepoint). */
    public static final String SAFEPOINT = "safepoint";
    public static final Field[] SAFEPOINT_FIELDS = {
        Field.u64("start_ns"), Field.u64("duration_ns"), Field.u64("safepoint_id"), Field.u32("total_threads"),
        Field.u32("jni_critical_threads"),
    };

    /** jdk.JavaExceptionThrow: every Throwable constructed. */
    public static final String EXCEPTION = "exception";
    public static final Field[] EXCEPTION_FIELDS = {
        Field.u64("start_ns"), Field.u64("thread_id"), Field.string("thread"), Field.string("class"),
        Field.string("message"),
    };

    /** A java.util.logging record (forwarded at once, not through JFR). */
    public static final String LOG = "log";
    public static final Field[] LOG_FIELDS = {
        Field.u64("time_ns"), Field.i32("level"), Field.string("logger"), Field.u64("thread_id"),
        Field.string("message"), Field.string("thrown"),
    };
}

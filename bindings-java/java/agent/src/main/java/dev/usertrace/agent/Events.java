package dev.usertrace.agent;

import dev.usertrace.Field;

/**
 * The events the agent emits, as {@code <provider>_<suffix>}. Public so that
 * tools (and tests) can register the same definitions before the agent runs,
 * to enable them in ftrace or perf in advance.
 *
 * <p>GC, GC_PAUSE and SAFEPOINT are completed spans ({@link dev.usertrace.Provider#completedSpan}):
 * their first two fields, which the library adds before those listed here,
 * are {@code span_start_ns} (the real start, on CLOCK_MONOTONIC, the clock of
 * perf's and {@code usertrace record}'s timestamps; see {@code MonotonicClock})
 * and {@code span_duration_ns}. JFR delivers events in batches, about once a
 * second, so a record's own perf/ftrace timestamp is when it was forwarded.
 * EXCEPTION's {@code start_ns} is the JFR start time in ns since the Unix epoch.
 */
public final class Events {
    private Events() {}

    /** jdk.GarbageCollection: a whole collection (for a concurrent collector, its cycle), a completed span. */
    public static final String GC = "gc";
    public static final Field[] GC_FIELDS = {
        Field.u32("gc_id"), Field.string("gc_name"), Field.string("cause"), Field.u64("sum_of_pauses_ns"),
        Field.u64("longest_pause_ns"),
    };

    /**
     * jdk.GCPhasePause: one stop-the-world pause, a completed span, with the
     * collector ({@code gc_name}, e.g. G1New) and cause of its collection
     * (jdk.GarbageCollection with the same {@code gc_id}).
     */
    public static final String GC_PAUSE = "gc_pause";
    public static final Field[] GC_PAUSE_FIELDS = {
        Field.u32("gc_id"), Field.string("gc_name"), Field.string("cause"),
    };

    /** A safepoint, from jdk.SafepointBegin's start to jdk.SafepointEnd's end: a completed span. */
    public static final String SAFEPOINT = "safepoint";
    public static final Field[] SAFEPOINT_FIELDS = {
        Field.u64("safepoint_id"), Field.u32("total_threads"), Field.u32("jni_critical_threads"),
    };

    /** jdk.JavaExceptionThrow: every Throwable constructed. */
    public static final String EXCEPTION = "exception";
    public static final Field[] EXCEPTION_FIELDS = {
        Field.u64("start_ns"), Field.u64("thread_id"), Field.string("thread"), Field.string("class"),
        Field.string("message"),
    };
}

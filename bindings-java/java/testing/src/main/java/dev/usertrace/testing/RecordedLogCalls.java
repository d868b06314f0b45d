package dev.usertrace.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.LogConvention;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Each appender's UsertraceRecordShowsEachLogEventExactlyTest, but for what
 * is its own (how its library is configured, and any call its API has and
 * the other's lacks): a recorded JVM logs on a thread of its own, and
 * {@code usertrace record} shows one {@code jvm_log} event per call, with the
 * exact values, on that thread. {@link #makeOnceRecorded} runs in the
 * recorded JVM, {@link #assertOneJvmLogEventPerCall} in the test.
 *
 * <p>The five calls both appenders are recorded making are here, beside the
 * event each must be, as both write the one convention
 * ({@link dev.usertrace.LogConvention}) for the same methods of SLF4J and of
 * the Log4j API.
 */
public final class RecordedLogCalls {
    /** The logging thread's name: each event's {@code comm}. */
    private static final String THREAD = "disk-checker";

    /**
     * The event each of the five calls must be, in order: level, message and
     * thrown, as JSON. The NUL becomes a space, as in the agent.
     */
    private static final List<String> EVENTS_OF_THE_FIVE_CALLS = List.of(
            "900 \"disk sda full\" \"\"",
            "1000 \"cannot write /var/log/x\" \"java.lang.IllegalStateException: disk sda full\"",
            "800 \"plain info\" \"\"",
            "500 \"nul inside\" \"\"",
            "300 \"tab\\tand \\\"quotes\\\" and é\" \"\"");

    private RecordedLogCalls() {}

    /** {@code error(String format, Object arg1, Object arg2)}. */
    @FunctionalInterface
    public interface FormatWithTwoArguments {
        void log(String format, Object arg1, Object arg2);
    }

    /**
     * The methods of the recorded JVM's logger that the five calls go
     * through, which SLF4J's Logger and Log4j's both have:
     * {@code new LoggerMethods(log::warn, log::error, log::info, log::debug, log::trace)}.
     */
    public record LoggerMethods(BiConsumer<String, Object> warn, FormatWithTwoArguments error, Consumer<String> info,
            Consumer<String> debug, Consumer<String> trace) {
        /** The calls, in the order of {@link RecordedLogCalls#EVENTS_OF_THE_FIVE_CALLS}. */
        void makeTheFiveCalls() {
            warn.accept("disk {} full", "sda");
            error.log("cannot write {}", "/var/log/x", new IllegalStateException("disk sda full"));
            info.accept("plain info");
            debug.accept("nul\0inside");
            trace.accept("tab\tand \"quotes\" and é");
        }
    }

    /**
     * In the recorded JVM, before its library is configured: {@code jvm_log}
     * registered as the agent registers it, which the appender's own
     * registration then meets, as in an application run with the agent.
     * The recorded JVM closes it after the calls (a failure before then ends
     * that JVM).
     */
    public static Provider registerJvmLogAsTheAgentDoes() {
        Provider jvm = new Provider("jvm");
        jvm.tracepoint(LogConvention.NAME, LogConvention.fields());
        return jvm;
    }

    /** {@link #makeOnceRecorded(Tracepoint, LoggerMethods, Runnable)} with the five calls alone. */
    public static void makeOnceRecorded(Tracepoint appender, LoggerMethods log) throws InterruptedException {
        makeOnceRecorded(appender, log, () -> {});
    }

    /**
     * In the recorded JVM: waits (60 s at most) until {@code usertrace record}
     * enables the appender's tracepoint, makes the five calls through
     * {@code log} and then {@code more} on the thread "disk-checker", and
     * prints its {@code thread_id=} and the {@code pid=}, which every event
     * must carry. If the recorder never attaches, it says so and exits 3,
     * which fails the test with the console.
     */
    public static void makeOnceRecorded(Tracepoint appender, LoggerMethods log, Runnable more)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!appender.isEnabled() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        if (!appender.isEnabled()) {
            System.out.println("app: usertrace record did not attach within 60 s: " + appender.registrationError());
            System.exit(3);
        }
        Thread t = new Thread(() -> {
            log.makeTheFiveCalls();
            more.run();
        }, THREAD);
        t.start();
        t.join();
        System.out.println("thread_id=" + t.getId());
        System.out.println("pid=" + ProcessHandle.current().pid());
    }

    /**
     * Records {@code main}, which calls {@link #makeOnceRecorded} and prints
     * {@code app: done} last, and asserts one {@code jvm_log} event per call,
     * in the order of the calls: the five calls' events, then
     * {@code moreEvents}, each with its level, message and thrown as written
     * there ({@code 900 "disk sda full" ""}), the {@code logger}, the logging
     * thread's id and a time_ns no earlier than the previous event's, nor
     * later than the recording's end; in its header, the JVM's pid, the
     * thread's name as comm and {@code java} as the process. Fails, never
     * skips, without user_events.
     *
     * @param tempPrefix begins the names of the recording's temporary files
     */
    public static void assertOneJvmLogEventPerCall(String tempPrefix, Class<?> main, String logger,
            String... moreEvents) throws Exception {
        Recording.requireKernel();
        List<String> expected = new ArrayList<>(EVENTS_OF_THE_FIVE_CALLS);
        expected.addAll(List.of(moreEvents));
        long before = System.currentTimeMillis() * 1_000_000L;
        Recording r = Recording.of(tempPrefix, "jvm_log", main);
        long after = System.currentTimeMillis() * 1_000_000L + 1_000_000L;
        assertTrue(r.console.contains("app: done"), r.console);
        String threadId = Recording.printed(r.console, "thread_id");
        String pid = Recording.printed(r.console, "pid");

        assertEquals(expected.size(), r.events.size(), r.console);
        long previous = before;
        for (int i = 0; i < expected.size(); i++) {
            String line = r.events.get(i);
            assertEquals(expected.get(i), Recording.field(line, "level") + " " + Recording.field(line, "message") + " "
                    + Recording.field(line, "thrown"), line);
            assertEquals("\"" + logger + "\"", Recording.field(line, "logger"), line);
            assertEquals(threadId, Recording.field(line, "thread_id"), line);
            long t = Long.parseLong(Recording.field(line, "time_ns"));
            assertTrue(t >= previous && t <= after, "time_ns " + t + " after " + previous + ", before " + after + ": " + line);
            previous = t;
            assertEquals(pid, Recording.header(line, "pid"), line);
            assertEquals("\"" + THREAD + "\"", Recording.header(line, "comm"), line);
            assertEquals("\"java\"", Recording.header(line, "process"), line);
        }
    }
}

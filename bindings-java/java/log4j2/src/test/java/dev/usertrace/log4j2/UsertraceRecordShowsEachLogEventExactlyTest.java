package dev.usertrace.log4j2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.LogConvention;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * In the guest kernel: a JVM configured by log4j2-test.xml logs through the
 * Log4j API on a thread of its own; {@code usertrace record} shows one
 * {@code jvm_log} event per call, with the exact values, on that thread.
 */
@Tag("kernel")
class UsertraceRecordShowsEachLogEventExactlyTest {
    /** The recorded JVM: waits for the recorder, then logs six events on the thread "disk-checker". */
    public static final class App {
        public static void main(String[] args) throws Exception {
            try (Provider jvm = new Provider("jvm")) {
                jvm.tracepoint(LogConvention.NAME, LogConvention.fields()); // as the agent registers it
                Logger log = LogManager.getLogger("dev.usertrace.log4j2.disk");
                LoggerContext context = (LoggerContext) LogManager.getContext(false);
                UsertraceAppender appender = context.getConfiguration().getAppender("USERTRACE");
                if (appender == null || !appender.isStarted()) {
                    System.out.println("app: the appender was not made: see Log4j's status log above");
                    System.exit(3);
                }
                Tracepoint tp = appender.tracepoint();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!tp.isEnabled() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                if (!tp.isEnabled()) {
                    System.out.println("app: usertrace record did not attach within 60 s: " + tp.registrationError());
                    System.exit(3);
                }
                Thread t = new Thread(() -> {
                    log.warn("disk {} full", "sda");
                    log.error("cannot write {}", "/var/log/x", new IllegalStateException("disk sda full"));
                    log.info("plain info");
                    log.debug("nul\0inside");
                    log.trace("tab\tand \"quotes\" and é");
                    log.fatal("out of {}", "disks");
                }, "disk-checker");
                t.start();
                t.join();
                System.out.println("thread_id=" + t.getId());
                System.out.println("pid=" + ProcessHandle.current().pid());
            }
            System.out.println("app: done");
        }
    }

    @Test
    void each_call_is_one_jvm_log_event_with_the_exact_fields_on_the_logging_thread() throws Exception {
        Recording.requireKernel();
        long before = System.currentTimeMillis() * 1_000_000L;
        Recording r = Recording.of("jvm_log", App.class);
        long after = System.currentTimeMillis() * 1_000_000L + 1_000_000L;
        assertTrue(r.console.contains("app: done"), r.console);
        String threadId = Recording.printed(r.console, "thread_id");
        String pid = Recording.printed(r.console, "pid");

        List<String> expected = List.of(
                "900 \"disk sda full\" \"\"",
                "1000 \"cannot write /var/log/x\" \"java.lang.IllegalStateException: disk sda full\"",
                "800 \"plain info\" \"\"",
                "500 \"nul inside\" \"\"",
                "300 \"tab\\tand \\\"quotes\\\" and é\" \"\"",
                "1100 \"out of disks\" \"\"");
        assertEquals(expected.size(), r.events.size(), r.console);
        long previous = before;
        for (int i = 0; i < expected.size(); i++) {
            String line = r.events.get(i);
            assertEquals(expected.get(i), Recording.field(line, "level") + " " + Recording.field(line, "message") + " "
                    + Recording.field(line, "thrown"), line);
            assertEquals("\"dev.usertrace.log4j2.disk\"", Recording.field(line, "logger"), line);
            assertEquals(threadId, Recording.field(line, "thread_id"), line);
            long t = Long.parseLong(Recording.field(line, "time_ns"));
            assertTrue(t >= previous && t <= after, "time_ns " + t + " after " + previous + ", before " + after + ": " + line);
            previous = t;
            assertEquals(pid, Recording.header(line, "pid"), line);
            assertEquals("\"disk-checker\"", Recording.header(line, "comm"), line);
            assertEquals("\"java\"", Recording.header(line, "process"), line);
        }
    }
}

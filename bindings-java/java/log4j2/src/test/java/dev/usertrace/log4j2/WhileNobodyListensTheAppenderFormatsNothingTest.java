package dev.usertrace.log4j2;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.testing.ProcessConsole;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.Test;

/**
 * With no tracer attached (no user_events on the host; nobody recording
 * {@code jvm_log} in the guest), the appender reads the enable word and
 * returns: it reads nothing of the event, formats nothing, throws nothing.
 * (Whether Log4j formats a message before any appender is Log4j's choice: see below.)
 */
class WhileNobodyListensTheAppenderFormatsNothingTest {
    /** Counts its formatting. */
    static final class Counted {
        final AtomicInteger formatted = new AtomicInteger();

        @Override
        public String toString() {
            formatted.incrementAndGet();
            return "sda";
        }
    }

    /** Counts each look at it. */
    static final class CountedFailure extends IllegalStateException {
        private static final long serialVersionUID = 1L;
        final AtomicInteger read = new AtomicInteger();

        CountedFailure() {
            super("boom");
        }

        @Override
        public String getMessage() {
            read.incrementAndGet();
            return super.getMessage();
        }

        @Override
        public String toString() {
            read.incrementAndGet();
            return super.toString();
        }
    }

    static UsertraceAppender appender() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        return assertInstanceOf(UsertraceAppender.class, context.getConfiguration().getAppender("USERTRACE"));
    }

    @Test
    void the_event_itself_is_never_read() {
        UsertraceAppender appender = appender();
        assertFalse(appender.tracepoint().isEnabled(), "a tracer listens to jvm_log: this test needs none");
        LogEvent untouchable = (LogEvent) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {LogEvent.class},
                (proxy, method, args) -> {
                    throw new AssertionError("the appender called LogEvent." + method.getName());
                });
        appender.append(untouchable);
    }

    /** Logs 1000 times at each level with a counted argument and throwable, then prints the counts. */
    public static final class App {
        public static void main(String[] args) {
            assertFalse(appender().tracepoint().isEnabled(), "a tracer listens to jvm_log: this test needs none");
            Logger log = LogManager.getLogger("dev.usertrace.log4j2.noop");
            Counted arg = new Counted();
            CountedFailure failure = new CountedFailure();
            for (int i = 0; i < 1000; i++) {
                log.trace("disk {} full", arg);
                log.debug("disk {} full", arg);
                log.info("disk {} full", arg);
                log.warn("disk {} full", arg);
                log.error("disk {} full", arg, failure);
                log.fatal("disk {} full", arg);
            }
            System.out.println("formatted=" + arg.formatted.get() + " thrown_read=" + failure.read.get());
        }
    }

    /**
     * Log4j's default, garbage-free events (thread locals on, as outside web
     * apps) format a parameterized message as Log4j makes the event, before
     * any appender, this one or another: that is Log4j's own cost. With its
     * plain events ({@code log4j2.enableThreadlocals=false}) the message
     * waits for an appender to ask, and this one asks nothing.
     */
    @Test
    void with_log4js_plain_events_logging_at_every_level_formats_nothing() throws Exception {
        String out = run("-Dlog4j2.enableThreadlocals=false");
        assertTrue(out.contains("formatted=0 thrown_read=0"), out);
    }

    @Test
    void with_log4js_default_events_logging_at_every_level_throws_nothing() throws Exception {
        String out = run();
        assertTrue(out.contains("formatted="), out);
    }

    /** App's output, in a JVM of its own (Log4j reads its event factory once per JVM). */
    static String run(String... jvmArgs) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(jvmArgs));
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(App.class.getName());
        return ProcessConsole.of(new ProcessBuilder(cmd), "the app", "usertrace-log4j2-noop");
    }
}

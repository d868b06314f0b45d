package dev.usertrace.logback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.status.Status;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * With no tracer attached (no user_events on the host; nobody recording
 * {@code jvm_log} in the guest), the appender reads the enable word and
 * returns: it reads nothing of the event, so no argument is formatted;
 * nothing is thrown, no error reported.
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

    static UsertraceAppender appender(LoggerContext context) {
        return assertInstanceOf(UsertraceAppender.class, context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("USERTRACE"));
    }

    @Test
    void logging_at_every_level_formats_nothing_and_throws_nothing() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        UsertraceAppender appender = appender(context);
        assertFalse(appender.tracepoint().isEnabled(), "a tracer listens to jvm_log: this test needs none");
        int errorsBefore = errors(context).size();
        org.slf4j.Logger log = LoggerFactory.getLogger("dev.usertrace.logback.noop");
        Counted arg = new Counted();
        IllegalStateException failure = new IllegalStateException("boom");
        for (int i = 0; i < 1000; i++) {
            log.trace("disk {} full", arg);
            log.debug("disk {} full", arg);
            log.info("disk {} full", arg);
            log.warn("disk {} full", arg);
            log.error("disk {} full", arg, failure);
            log.atWarn().addKeyValue("disk", arg).log("disk {} full", arg);
        }
        assertEquals(0, arg.formatted.get(), "arguments formatted");
        // Logback itself reads the throwable (its message, class and stack) as
        // it makes the event, before any appender: the_event_itself_is_never_read
        // shows that this appender reads nothing of it.
        assertEquals(errorsBefore, errors(context).size(), errors(context).toString());
    }

    @Test
    void the_event_itself_is_never_read() {
        UsertraceAppender appender = appender((LoggerContext) LoggerFactory.getILoggerFactory());
        assertFalse(appender.tracepoint().isEnabled(), "a tracer listens to jvm_log: this test needs none");
        ILoggingEvent untouchable = (ILoggingEvent) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ILoggingEvent.class}, (proxy, method, args) -> {
                    throw new AssertionError("the appender called ILoggingEvent." + method.getName());
                });
        appender.doAppend(untouchable);
    }

    static List<String> errors(LoggerContext context) {
        return context.getStatusManager().getCopyOfStatusList().stream().filter(s -> s.getLevel() == Status.ERROR)
                .map(Status::getMessage).collect(Collectors.toList());
    }
}

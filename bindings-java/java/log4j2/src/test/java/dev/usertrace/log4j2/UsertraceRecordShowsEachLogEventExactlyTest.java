package dev.usertrace.log4j2;

import dev.usertrace.Provider;
import dev.usertrace.testing.RecordedLogCalls;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * In the guest kernel: a JVM configured by log4j2-test.xml logs through the
 * Log4j API on a thread of its own; {@code usertrace record} shows one
 * {@code jvm_log} event per call, with the exact values, on that thread.
 * The five calls both appenders make, and the checks, are
 * {@link RecordedLogCalls}; this one adds a sixth at FATAL, which SLF4J lacks.
 */
@Tag("kernel")
class UsertraceRecordShowsEachLogEventExactlyTest {
    /** The recorded JVM: once the recorder attaches, makes the five calls, then one at FATAL. */
    public static final class App {
        public static void main(String[] args) throws Exception {
            Provider jvm = RecordedLogCalls.registerJvmLogAsTheAgentDoes();
            Logger log = LogManager.getLogger("dev.usertrace.log4j2.disk");
            LoggerContext context = (LoggerContext) LogManager.getContext(false);
            UsertraceAppender appender = context.getConfiguration().getAppender("USERTRACE");
            if (appender == null || !appender.isStarted()) {
                System.out.println("app: the appender was not made: see Log4j's status log above");
                System.exit(3);
            }
            RecordedLogCalls.makeOnceRecorded(appender.tracepoint(),
                    new RecordedLogCalls.LoggerMethods(log::warn, log::error, log::info, log::debug, log::trace),
                    () -> log.fatal("out of {}", "disks"));
            jvm.close();
            System.out.println("app: done");
        }
    }

    @Test
    void each_call_is_one_jvm_log_event_with_the_exact_fields_on_the_logging_thread() throws Exception {
        RecordedLogCalls.assertOneJvmLogEventPerCall("usertrace-log4j2-record", App.class, "dev.usertrace.log4j2.disk",
                "1100 \"out of disks\" \"\"");
    }
}

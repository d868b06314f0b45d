package dev.usertrace.logback;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import dev.usertrace.Provider;
import dev.usertrace.testing.RecordedLogCalls;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * In the guest kernel: a JVM configured by logback-test.xml logs through
 * SLF4J on a thread of its own; {@code usertrace record} shows one
 * {@code jvm_log} event per call, with the exact values, on that thread.
 * The calls and the checks are {@link RecordedLogCalls}, shared with the
 * Log4j2 appender's test.
 */
@Tag("kernel")
class UsertraceRecordShowsEachLogEventExactlyTest {
    /** The recorded JVM: once the recorder attaches, makes the five calls through SLF4J. */
    public static final class App {
        public static void main(String[] args) throws Exception {
            Provider jvm = RecordedLogCalls.registerJvmLogAsTheAgentDoes();
            org.slf4j.Logger log = LoggerFactory.getLogger("dev.usertrace.logback.disk");
            LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
            UsertraceAppender appender = (UsertraceAppender) context.getLogger(Logger.ROOT_LOGGER_NAME)
                    .getAppender("USERTRACE");
            if (appender == null || !appender.isStarted()) {
                System.out.println("app: the appender did not start: " + context.getStatusManager().getCopyOfStatusList());
                System.exit(3);
            }
            RecordedLogCalls.makeOnceRecorded(appender.tracepoint(),
                    new RecordedLogCalls.LoggerMethods(log::warn, log::error, log::info, log::debug, log::trace));
            jvm.close();
            System.out.println("app: done");
        }
    }

    @Test
    void each_call_is_one_jvm_log_event_with_the_exact_fields_on_the_logging_thread() throws Exception {
        RecordedLogCalls.assertOneJvmLogEventPerCall("usertrace-logback-record", App.class, "dev.usertrace.logback.disk");
    }
}

package dev.usertrace.log4j2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.LogConvention;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.status.StatusData;
import org.apache.logging.log4j.status.StatusListener;
import org.apache.logging.log4j.status.StatusLogger;
import org.junit.jupiter.api.Test;

/** log4j2.xml (here log4j2-test.xml, and files named to a LoggerContext) configures the plugin by its element, {@code <Usertrace>}. */
class Log4j2XmlConfiguresTheAppenderTest {
    static LoggerContext load(String resource) throws Exception {
        LoggerContext context = new LoggerContext(resource, null,
                Log4j2XmlConfiguresTheAppenderTest.class.getResource("/" + resource).toURI());
        context.start();
        return context;
    }

    /** Log4j's status messages at ERROR, while {@code run} runs. */
    static List<String> errorsWhile(ThrowingRunnable run) throws Exception {
        List<String> errors = new CopyOnWriteArrayList<>();
        StatusListener listener = new StatusListener() {
            @Override
            public void log(StatusData data) {
                if (data.getLevel().isMoreSpecificThan(Level.ERROR)) {
                    errors.add(data.getFormattedStatus());
                }
            }

            @Override
            public Level getStatusLevel() {
                return Level.ERROR;
            }

            @Override
            public void close() {}
        };
        StatusLogger.getLogger().registerListener(listener);
        try {
            run.run();
        } finally {
            StatusLogger.getLogger().removeListener(listener);
        }
        return errors;
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void log4j2_test_xml_on_the_class_path_attaches_a_started_appender_writing_jvm_log() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Appender a = context.getConfiguration().getAppender("USERTRACE");
        UsertraceAppender appender = assertInstanceOf(UsertraceAppender.class, a);
        assertTrue(appender.isStarted());
        assertTrue(context.getConfiguration().getRootLogger().getAppenders().containsKey("USERTRACE"));
        assertEquals("jvm", appender.getProvider());
        assertEquals("jvm_log", appender.tracepoint().name());
        assertEquals(List.of(LogConvention.fields()), appender.tracepoint().fields());
    }

    @Test
    void a_provider_attribute_names_the_event_and_stopping_closes_the_tracepoint() throws Exception {
        LoggerContext[] context = new LoggerContext[1];
        List<String> errors = errorsWhile(() -> context[0] = load("usertrace-myapp.xml"));
        UsertraceAppender appender;
        try {
            assertEquals(List.of(), errors);
            appender = assertInstanceOf(UsertraceAppender.class, context[0].getConfiguration().getAppender("TRACE_EVENTS"));
            assertTrue(appender.isStarted());
            assertEquals("myapp", appender.getProvider());
            assertEquals("myapp_log", appender.tracepoint().name());
            context[0].getLogger("dev.usertrace.log4j2.myapp").info("configured {}", "from a file");
        } finally {
            context[0].stop();
        }
        assertTrue(appender.isStopped());
        assertTrue(appender.tracepoint().isClosed());
    }

    @Test
    void a_provider_name_user_events_cannot_take_makes_no_appender_with_an_error_and_logging_works() throws Exception {
        LoggerContext[] context = new LoggerContext[1];
        List<String> errors = errorsWhile(() -> context[0] = load("usertrace-bad-provider.xml"));
        try {
            assertNull(context[0].getConfiguration().getAppender("BAD"));
            assertTrue(errors.stream().anyMatch(e -> e.contains("my-app_log") && e.contains("[BAD]")), errors.toString());
            context[0].getLogger("any").error("still logs {}", 1, new IllegalStateException("x"));
        } finally {
            context[0].stop();
        }
        assertFalse(errors.isEmpty());
    }
}

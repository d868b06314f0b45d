package dev.usertrace.logback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.status.Status;
import dev.usertrace.LogConvention;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** logback.xml (here logback-test.xml, and files loaded by Joran) configures the appender by its class name. */
class LogbackXmlConfiguresTheAppenderTest {
    static LoggerContext load(String resource) throws Exception {
        LoggerContext context = new LoggerContext();
        context.setName(resource);
        JoranConfigurator joran = new JoranConfigurator();
        joran.setContext(context);
        joran.doConfigure(LogbackXmlConfiguresTheAppenderTest.class.getResource("/" + resource));
        return context;
    }

    static List<Status> errors(LoggerContext context) {
        return context.getStatusManager().getCopyOfStatusList().stream().filter(s -> s.getLevel() == Status.ERROR)
                .collect(Collectors.toList());
    }

    static String statuses(LoggerContext context) {
        return context.getStatusManager().getCopyOfStatusList().stream()
                .map(s -> s.getLevel() + " " + s.getMessage() + (s.getThrowable() == null ? "" : " " + s.getThrowable()))
                .collect(Collectors.joining("\n"));
    }

    @Test
    void logback_test_xml_on_the_class_path_attaches_a_started_appender_writing_jvm_log() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Appender<?> a = context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("USERTRACE");
        UsertraceAppender appender = assertInstanceOf(UsertraceAppender.class, a, statuses(context));
        assertTrue(appender.isStarted(), statuses(context));
        assertEquals("jvm", appender.getProvider());
        assertEquals("jvm_log", appender.tracepoint().name());
        assertEquals(List.of(LogConvention.fields()), appender.tracepoint().fields());
        assertEquals(List.of(), errors(context), statuses(context));
    }

    @Test
    void a_provider_element_names_the_event() throws Exception {
        LoggerContext context = load("usertrace-myapp.xml");
        try {
            Appender<?> a = context.getLogger("dev.usertrace.logback.myapp").getAppender("TRACE_EVENTS");
            UsertraceAppender appender = assertInstanceOf(UsertraceAppender.class, a, statuses(context));
            assertTrue(appender.isStarted(), statuses(context));
            assertEquals("myapp", appender.getProvider());
            assertEquals("myapp_log", appender.tracepoint().name());
            assertEquals(List.of(), errors(context), statuses(context));
            context.getLogger("dev.usertrace.logback.myapp").info("configured {}", "from a file");
        } finally {
            context.stop();
        }
        Appender<?> a = context.getLogger("dev.usertrace.logback.myapp").getAppender("TRACE_EVENTS");
        // Stopping the context stops (and detaches) its appenders, and closes their tracepoints.
        assertTrue(a == null || !a.isStarted());
    }

    @Test
    void a_provider_name_user_events_cannot_take_leaves_the_appender_stopped_with_an_error_and_logging_works() throws Exception {
        LoggerContext context = load("usertrace-bad-provider.xml");
        try {
            Appender<?> a = context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("BAD");
            UsertraceAppender appender = assertInstanceOf(UsertraceAppender.class, a, statuses(context));
            assertFalse(appender.isStarted());
            String text = statuses(context);
            assertTrue(errors(context).stream().anyMatch(s -> s.getMessage().contains("my-app_log")
                    && s.getMessage().contains("[BAD]") && s.getThrowable() != null), text);
            context.getLogger("any").error("still logs {}", 1, new IllegalStateException("x"));
        } finally {
            context.stop();
        }
    }
}

package dev.usertrace.logback;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyVO;
import dev.usertrace.Field;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The values follow the agent's java.util.logging bridge: levels on JUL's
 * scale, a throwable as its {@code toString()}, and the event's fields are
 * the agent's {@code Events.LOG_FIELDS}, read from its source while the
 * convention has no home in the API.
 */
class LevelsAndThrowablesAreWrittenAsTheJulBridgeWritesThemTest {
    @Test
    void levels_are_on_java_util_loggings_scale() {
        assertEquals(java.util.logging.Level.FINEST.intValue(), UsertraceAppender.julLevel(Level.TRACE));
        assertEquals(java.util.logging.Level.FINE.intValue(), UsertraceAppender.julLevel(Level.DEBUG));
        assertEquals(java.util.logging.Level.INFO.intValue(), UsertraceAppender.julLevel(Level.INFO));
        assertEquals(java.util.logging.Level.WARNING.intValue(), UsertraceAppender.julLevel(Level.WARN));
        assertEquals(java.util.logging.Level.SEVERE.intValue(), UsertraceAppender.julLevel(Level.ERROR));
    }

    @Test
    void a_throwable_is_its_to_string_and_a_deserialized_one_reads_the_same() {
        IllegalStateException e = new IllegalStateException("disk sda full");
        assertEquals("java.lang.IllegalStateException: disk sda full", UsertraceAppender.thrown(new ThrowableProxy(e)));
        assertEquals("java.lang.IllegalStateException: disk sda full",
                UsertraceAppender.thrown(ThrowableProxyVO.build(new ThrowableProxy(e))));
        assertEquals("java.lang.IllegalStateException",
                UsertraceAppender.thrown(ThrowableProxyVO.build(new ThrowableProxy(new IllegalStateException()))));
        assertEquals("", UsertraceAppender.thrown(null));
    }

    @Test
    void strings_lose_their_nuls_as_in_the_agent() {
        assertEquals("a b", LogConvention.text("a\0b"));
        assertEquals("", LogConvention.text(null));
    }

    @Test
    void the_fields_are_the_agents_log_fields() throws Exception {
        Path events = agentSources().resolve("dev/usertrace/agent/Events.java");
        String source = Files.readString(events);
        Matcher block = Pattern.compile("LOG_FIELDS = \\{(.*?)\\};", Pattern.DOTALL).matcher(source);
        if (!block.find()) {
            throw new AssertionError("no LOG_FIELDS in " + events);
        }
        List<String> agent = new ArrayList<>();
        Matcher f = Pattern.compile("Field\\.(\\w+)\\(\"(\\w+)\"\\)").matcher(block.group(1));
        while (f.find()) {
            agent.add(f.group(1) + " " + f.group(2));
        }
        List<String> ours = new ArrayList<>();
        for (Field field : LogConvention.FIELDS) {
            ours.add(field.type().name().toLowerCase(Locale.ROOT) + " " + field.name());
        }
        assertEquals(agent, ours);
        assertEquals(List.of("u64 time_ns", "i32 level", "string logger", "u64 thread_id", "string message", "string thrown"), ours);
    }

    /** bindings-java/java/agent/src/main/java, beside this module's target/test-classes. */
    static Path agentSources() throws URISyntaxException {
        Path testClasses = Path.of(LevelsAndThrowablesAreWrittenAsTheJulBridgeWritesThemTest.class.getProtectionDomain()
                .getCodeSource().getLocation().toURI());
        return testClasses.getParent().getParent().getParent().resolve("agent/src/main/java");
    }
}

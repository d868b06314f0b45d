package dev.usertrace.log4j2;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usertrace.LogConvention;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;

/**
 * The values follow the agent's java.util.logging bridge: levels on JUL's
 * scale, a throwable as its {@code toString()}. The event and its strings
 * are the API's {@link LogConvention}, which every bridge shares.
 */
class LevelsAndThrowablesAreWrittenAsTheJulBridgeWritesThemTest {
    @Test
    void levels_are_on_java_util_loggings_scale_with_fatal_above_severe() {
        assertEquals(java.util.logging.Level.FINEST.intValue(), UsertraceAppender.julLevel(Level.TRACE));
        assertEquals(java.util.logging.Level.FINE.intValue(), UsertraceAppender.julLevel(Level.DEBUG));
        assertEquals(java.util.logging.Level.INFO.intValue(), UsertraceAppender.julLevel(Level.INFO));
        assertEquals(java.util.logging.Level.WARNING.intValue(), UsertraceAppender.julLevel(Level.WARN));
        assertEquals(java.util.logging.Level.SEVERE.intValue(), UsertraceAppender.julLevel(Level.ERROR));
        assertEquals(1100, UsertraceAppender.julLevel(Level.FATAL));
    }

    @Test
    void a_custom_level_counts_as_the_next_more_severe_standard_level() {
        // Between WARN (300) and INFO (400): Log4j's standard level for it is WARN, the more severe.
        assertEquals(900, UsertraceAppender.julLevel(Level.forName("NOTICE", 350)));
        // Between INFO (400) and DEBUG (500): INFO.
        assertEquals(800, UsertraceAppender.julLevel(Level.forName("DETAIL", 450)));
    }

    @Test
    void a_throwable_is_its_to_string() {
        assertEquals("java.lang.IllegalStateException: disk sda full",
                UsertraceAppender.thrown(new IllegalStateException("disk sda full")));
        assertEquals("java.lang.IllegalStateException", UsertraceAppender.thrown(new IllegalStateException()));
        assertEquals("", UsertraceAppender.thrown(null));
    }

}

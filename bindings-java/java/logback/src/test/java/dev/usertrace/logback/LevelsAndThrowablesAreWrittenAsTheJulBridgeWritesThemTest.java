package dev.usertrace.logback;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyVO;
import dev.usertrace.LogConvention;
import org.junit.jupiter.api.Test;

/**
 * The values follow the agent's java.util.logging bridge: levels on JUL's
 * scale, a throwable as its {@code toString()}. The event and its strings
 * are the API's {@link LogConvention}, which every bridge shares.
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

}

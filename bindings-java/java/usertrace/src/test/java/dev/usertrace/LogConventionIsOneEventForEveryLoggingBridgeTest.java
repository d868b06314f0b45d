package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The one log event the agent's JUL handler and the Logback and Log4j2
 * appenders all write: its name, its fields in order, and how its strings
 * are made.
 */
class LogConventionIsOneEventForEveryLoggingBridgeTest {
    @Test
    void jvm_log_has_these_fields_in_this_order() {
        assertEquals("jvm", LogConvention.DEFAULT_PROVIDER);
        assertEquals("log", LogConvention.NAME);
        List<String> fields = Stream.of(LogConvention.fields())
                .map(f -> f.type().name().toLowerCase(Locale.ROOT) + " " + f.name())
                .collect(Collectors.toList());
        assertEquals(List.of("u64 time_ns", "i32 level", "string logger", "u64 thread_id", "string message", "string thrown"), fields);
    }

    @Test
    void the_fields_are_a_copy_that_a_caller_cannot_change_for_others() {
        Field[] mine = LogConvention.fields();
        mine[0] = Field.u8("changed");
        assertNotSame(mine, LogConvention.fields());
        assertEquals("time_ns", LogConvention.fields()[0].name());
    }

    @Test
    void strings_lose_their_nuls_and_null_is_empty() {
        assertEquals("a b", LogConvention.text("a\0b"));
        assertEquals("", LogConvention.text(null));
        assertEquals("disk sda full", LogConvention.text("disk sda full"));
    }
}

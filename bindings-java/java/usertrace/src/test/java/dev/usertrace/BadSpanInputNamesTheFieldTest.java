package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A span's values and definition are checked as an event's are, by the
 * same rules, with the span convention's fields added by the native
 * library (so a field of the same name, or one field too many, is refused).
 */
class BadSpanInputNamesTheFieldTest {
    static Provider provider;
    static SpanTracepoint span;

    @BeforeAll
    static void setUp() {
        provider = new Provider("spanchecks");
        span = provider.span("req", Field.u8("small"), Field.u64("big"), Field.string("path"));
    }

    @AfterAll
    static void tearDown() {
        provider.close();
    }

    @Test
    void good_values_pass() {
        span.validate(255, -1L, "ok");
        span.validate(0, Long.MIN_VALUE, "");
    }

    @Test
    void bad_values_name_the_field_and_event() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> span.validate(256, 0, ""));
        assertEquals("field small of event spanchecks_req is u8, but 256 was given, which does not fit (0..255)",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> span.validate(1, 0, "a\0b"));
        assertTrue(e.getMessage().startsWith("field path of event spanchecks_req got a string with a NUL"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> span.validate(1, 2));
        assertEquals("event spanchecks_req has 3 fields but 2 values were given", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> span.validate(1, "2", ""));
        assertEquals("field big of event spanchecks_req is u64, but a String was given", e.getMessage());
    }

    @Test
    void a_completed_spans_start_and_duration_are_checked_as_u64() {
        Tracepoint pause = provider.completedSpan("pause", Field.string("why"));
        pause.validate(-1L, 0L, "u64 takes any long");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> pause.validate(1.5, 0L, ""));
        assertEquals("field span_start_ns of event spanchecks_pause is u64, but a double was given", e.getMessage());
    }

    @Test
    void bad_definitions_are_typed_exceptions() {
        UsertraceException e = assertThrows(UsertraceException.class, () -> provider.span("a b"));
        assertEquals(ErrorKind.INVALID_NAME, e.kind());
        e = assertThrows(UsertraceException.class, () -> provider.span("dup", Field.u64(Span.BEGIN_FIELD)));
        assertEquals(ErrorKind.DUPLICATE_FIELD, e.kind());
        assertEquals("event spanchecks_dup declares field span_begin twice; give each field its own name", e.getMessage());
        e = assertThrows(UsertraceException.class, () -> provider.completedSpan("dup", Field.u32(Span.DURATION_NS_FIELD)));
        assertEquals(ErrorKind.DUPLICATE_FIELD, e.kind());
        Field[] most = new Field[Tracepoint.MAX_FIELDS];
        for (int i = 0; i < most.length; i++) {
            most[i] = Field.u8("f" + i);
        }
        // The id and its trace context take 4 fields of the 32: 28 of the
        // span's own fit, 29 do not.
        provider.span("most", Arrays.copyOf(most, Tracepoint.MAX_FIELDS - 4)).close();
        e = assertThrows(UsertraceException.class, () -> provider.span("many", Arrays.copyOf(most, Tracepoint.MAX_FIELDS - 3)));
        assertEquals(ErrorKind.TOO_MANY_FIELDS, e.kind());
        assertEquals("event spanchecks_many declares 33 fields; at most 32 are supported: split it into several events",
                e.getMessage());
        e = assertThrows(UsertraceException.class,
                () -> provider.completedSpan("many", Arrays.copyOf(most, Tracepoint.MAX_FIELDS - 1)));
        assertEquals(ErrorKind.TOO_MANY_FIELDS, e.kind());
    }

    @Test
    void a_closed_provider_makes_no_span() {
        Provider p = new Provider("spanchecks");
        p.close();
        assertThrows(IllegalStateException.class, () -> p.span("late"));
    }
}

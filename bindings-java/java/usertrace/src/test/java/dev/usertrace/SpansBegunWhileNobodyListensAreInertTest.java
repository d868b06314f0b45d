package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * While nobody listens (on the host, or in the guest before a tracer
 * attaches), beginning a span returns one shared inert span, allocates
 * nothing, and closing it emits nothing.
 */
class SpansBegunWhileNobodyListensAreInertTest {
    @Test
    void begin_returns_the_shared_inert_span() {
        try (Provider p = new Provider("inertspan")) {
            SpanTracepoint plain = p.span("plain");
            SpanTracepoint typed = p.span("typed", Field.u32("n"), Field.string("s"));
            assertFalse(typed.isEnabled());
            Span a = plain.begin();
            Span b = typed.begin(7, "x");
            Span c = typed.event().put(7).put("x").begin();
            assertSame(a, b);
            assertSame(a, c);
            assertEquals(0, a.id());
            assertFalse(a.isRecording());
            assertEquals("Span[inert]", a.toString());
            a.close();
            a.close();
            // Nothing is checked while nobody listens, as for Tracepoint.emit.
            assertSame(a, typed.begin("wrong", "types", "and count"));
            typed.end(0);
            typed.end(12345);
        }
    }

    @Test
    void a_disabled_begin_and_close_allocate_nothing() {
        try (Provider p = new Provider("inertspan")) {
            SpanTracepoint plain = p.span("plain");
            SpanTracepoint typed = p.span("typed", Field.u32("n"), Field.string("s"));
            com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            int rounds = 100_000;
            String s = "x";
            for (int pass = 0; pass < 2; pass++) { // the first pass warms up (class loading, thread-locals)
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < rounds; i++) {
                    try (Span span = plain.begin()) {
                        assertFalse(span.isRecording());
                    }
                    try (Span span = typed.event().put(i).put(s).begin()) {
                        assertFalse(span.isRecording());
                    }
                }
                long allocated = threads.getCurrentThreadAllocatedBytes() - before;
                if (pass == 1) {
                    // One object per begin would be at least 16 bytes each: 3.2 MB here.
                    assertTrue(allocated < rounds, allocated + " bytes allocated by " + 2 * rounds + " disabled spans");
                }
            }
        }
    }

    @Test
    void a_span_tracepoint_shows_its_own_fields_and_a_completed_span_the_conventions() {
        try (Provider p = new Provider("inertspan")) {
            SpanTracepoint typed = p.span("typed", Field.u32("n"), Field.string("s"));
            assertEquals("inertspan_typed", typed.name());
            assertEquals(List.of(Field.u32("n"), Field.string("s")), typed.fields());
            Tracepoint pause = p.completedSpan("pause", Field.string("why"));
            assertEquals("inertspan_pause", pause.name());
            assertEquals(List.of(Field.u64(Span.START_NS_FIELD), Field.u64(Span.DURATION_NS_FIELD), Field.string("why")),
                    pause.fields());
            pause.emit(1L, 2L, "nobody listens");
            typed.close();
            assertSame(Span.INERT, typed.begin(1, "closed"));
        }
    }
}

package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The host has no user_events: everything works, nothing is enabled, and the reason is at hand. */
@Tag("host")
class WithoutUserEventsTracepointsAreDisabledTest {
    @Test
    void status_says_why_tracing_is_unavailable() {
        Status s = Usertrace.status();
        assertFalse(s.isAvailable());
        assertNotEquals(Availability.AVAILABLE, s.availability());
        assertTrue(s.message().contains("user_events is not available"), s.message());
        assertTrue(Usertrace.isNativeLoaded(), "the library in the jar should load on Linux: " + Usertrace.nativeLoadError());
    }

    @Test
    void a_tracepoint_is_created_disabled_with_its_registration_error() {
        try (Provider p = new Provider("hosttest")) {
            Tracepoint tp = p.tracepoint("disabled", Field.u32("n"), Field.string("s"));
            assertEquals("hosttest_disabled", tp.name());
            assertFalse(tp.isEnabled());
            assertFalse(tp.isRegistered());
            UsertraceException err = tp.registrationError();
            assertNotNull(err);
            assertEquals(ErrorKind.UNAVAILABLE, err.kind());
            assertEquals(1, err.code());
            // Disabled emits do nothing, and check nothing.
            tp.emit(1, "x");
            tp.emit("not", "checked", "while disabled");
            tp.event().put(7).put("y").emit();
            UsertraceException again = assertThrows(UsertraceException.class, tp::register);
            assertEquals(ErrorKind.UNAVAILABLE, again.kind());
        }
    }

    @Test
    void a_span_is_created_disabled_with_its_registration_error() {
        try (Provider p = new Provider("hosttest")) {
            SpanTracepoint span = p.span("request", Field.string("path"));
            assertFalse(span.isEnabled());
            assertFalse(span.isRegistered());
            assertEquals(ErrorKind.UNAVAILABLE, span.registrationError().kind());
            assertEquals(ErrorKind.UNAVAILABLE, p.completedSpan("pause").registrationError().kind());
            try (Span s = span.begin("/")) {
                assertEquals(0, s.id());
            }
        }
    }

    @Test
    void close_is_idempotent_and_leaves_the_tracepoint_disabled() {
        Provider p = new Provider("hosttest");
        Tracepoint tp = p.tracepoint("closing", Field.u8("n"));
        tp.close();
        tp.close();
        p.close();
        assertTrue(tp.isClosed());
        assertFalse(tp.isEnabled());
        tp.emit(1);
        assertThrows(IllegalStateException.class, tp::register);
        assertThrows(IllegalStateException.class, () -> p.tracepoint("late", Field.u8("n")));
    }

    @Test
    void unreachable_tracepoints_are_freed_by_the_cleaner_without_harm() throws InterruptedException {
        Provider p = new Provider("hosttest");
        for (int i = 0; i < 2000; i++) {
            Tracepoint tp = p.tracepoint("garbage", Field.u32("n"));
            if (i % 2 == 0) {
                tp.close();
            }
        }
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(20);
        }
        Tracepoint survivor = p.tracepoint("garbage", Field.u32("n"));
        assertFalse(survivor.isEnabled());
        p.close();
    }
}

package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * W3C trace context while nobody listens (on the host; in the guest before a
 * tracer attaches): headers read and written by the core's rules, a bad
 * {@code traceparent} is no context and no exception, and a span nobody
 * records passes the caller's context on unchanged.
 */
class TraceContextPassesOnWhileNobodyListensTest {
    static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Test
    void a_traceparent_reads_as_its_ids_and_writes_back_the_same() {
        TraceContext c = TraceContext.fromTraceparent(TRACEPARENT, "vendor=x");
        assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", c.traceId());
        assertEquals("00f067aa0ba902b7", c.spanId());
        assertTrue(c.isSampled());
        assertEquals(TRACEPARENT, c.traceparent());
        assertEquals("vendor=x", c.tracestate());
        assertEquals(c, TraceContext.fromTraceparent(TRACEPARENT, "vendor=x"));
        Map<String, String> out = new HashMap<>();
        c.inject(out);
        assertEquals(Map.of("traceparent", TRACEPARENT, "tracestate", "vendor=x"), out);
    }

    @Test
    void a_bad_traceparent_is_no_context_and_never_throws() {
        for (String bad : new String[] {"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                TRACEPARENT + "-" + "x".repeat(600), null}) {
            assertNull(TraceContext.fromTraceparent(bad), bad);
        }
        assertNull(TraceContext.fromTraceparent(TRACEPARENT, "not a valid=list==").tracestate());
    }

    @Test
    void extract_matches_names_without_case() {
        TraceContext c = TraceContext.extract(Map.of("TraceParent", TRACEPARENT, "TRACESTATE", "a=b", "Accept", "*/*"));
        assertEquals(TRACEPARENT, c.traceparent());
        assertEquals("a=b", c.tracestate());
        assertNull(TraceContext.extract(Map.of()));
        assertEquals(c, TraceContext.extract(name -> name.equals("traceparent") ? TRACEPARENT : name.equals("tracestate") ? "a=b" : null));
    }

    @Test
    void a_span_nobody_records_passes_the_callers_context_on() {
        TraceContext incoming = TraceContext.fromTraceparent(TRACEPARENT);
        try (Provider p = new Provider("jctxhost")) {
            SpanTracepoint handle = p.span("handle", Field.u32("n"));
            assertFalse(handle.isEnabled());
            assertNull(TraceContext.current());
            try (Scope s = incoming.makeCurrent(); Span span = handle.begin(1)) {
                assertSame(incoming, TraceContext.current());
                assertFalse(span.isRecording());
                assertEquals(incoming, span.context());
                assertEquals(TRACEPARENT, span.traceparent());
                try (Scope inner = span.makeCurrent()) {
                    assertEquals(incoming, TraceContext.current());
                }
            }
            assertNull(TraceContext.current(), "the scope put back the context before it");
            Span explicit = handle.beginIn(incoming, 2);
            assertEquals(0, explicit.id());
            assertEquals(incoming, explicit.context());
            assertNull(handle.beginIn(null, 3).context());
        }
    }

    @Test
    void inject_current_writes_the_current_context_and_nothing_outside_every_trace() {
        TraceContext incoming = TraceContext.fromTraceparent(TRACEPARENT, "vendor=x");
        try (Provider p = new Provider("jctxinject")) {
            SpanTracepoint handle = p.span("handle");
            // A request that brought no context: the documented handler,
            // with nothing to send on and no exception.
            Map<String, String> none = new HashMap<>();
            try (Scope caller = TraceContext.makeCurrent(TraceContext.extract(Map.of()));
                 Span span = handle.begin();
                 Scope inner = span.makeCurrent()) {
                assertNull(TraceContext.current());
                TraceContext.injectCurrent(none::put);
            }
            assertEquals(Map.of(), none);
            Map<String, String> out = new HashMap<>();
            try (Scope caller = incoming.makeCurrent(); Span span = handle.begin(); Scope inner = span.makeCurrent()) {
                TraceContext.injectCurrent(out);
            }
            assertEquals(Map.of("traceparent", TRACEPARENT, "tracestate", "vendor=x"), out);
        }
    }
}

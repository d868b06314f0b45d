package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.logs.Severity;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.exporter.internal.otlp.logs.LogsRequestMarshaler;
import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.testing.logs.TestLogRecordData;
import io.opentelemetry.sdk.testing.trace.TestSpanData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import java.io.ByteArrayOutputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The mapping of the SDK's spans and log records to the events' arguments:
 * the readable fields agree with the SpanData, and the OTLP bytes are the
 * very {@code Span} messages of the request the SDK's OTLP exporter sends.
 */
@Tag("host")
class OtlpMappingTest {
    static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final InstrumentationScopeInfo SCOPE = InstrumentationScopeInfo.builder("shop.checkout").setVersion("2.1").build();

    static SpanData span(String id, String parent, String name, InstrumentationScopeInfo scope) {
        return TestSpanData.builder()
                .setSpanContext(SpanContext.create(TRACE, id, TraceFlags.getSampled(), TraceState.builder().put("k", "v").build()))
                .setParentSpanContext(parent == null ? SpanContext.getInvalid()
                        : SpanContext.create(TRACE, parent, TraceFlags.getSampled(), TraceState.getDefault()))
                .setName(name).setKind(SpanKind.SERVER)
                .setStartEpochNanos(1_700_000_000_123_456_789L).setEndEpochNanos(1_700_000_000_223_456_789L)
                .setAttributes(Attributes.of(AttributeKey.stringKey("http.route"), "/cart", AttributeKey.longKey("n"), 7L))
                .setStatus(StatusData.error()).setHasEnded(true).setTotalRecordedEvents(0).setTotalRecordedLinks(0)
                .setTotalAttributeCount(2).setInstrumentationScopeInfo(scope).setResource(Resource.empty())
                .build();
    }

    @Test
    void each_span_carries_its_ids_times_name_scope_and_the_sdks_own_span_message() throws Exception {
        SpanData root = span("00f067aa0ba902b7", null, "GET /cart", SCOPE);
        SpanData child = span("b7ad6b7169203331", "00f067aa0ba902b7", "SELECT cart", InstrumentationScopeInfo.create("jdbc"));
        List<OtlpSpans.Span> spans = OtlpSpans.of(List.of(root, child));

        assertEquals(2, spans.size());
        OtlpSpans.Span r = spans.stream().filter(s -> s.name().equals("GET /cart")).findFirst().orElseThrow();
        assertEquals(0x4bf92f3577b34da6L, r.traceIdHi());
        assertEquals(0xa3ce929d0e0e4736L, r.traceIdLo());
        assertEquals(0x00f067aa0ba902b7L, r.spanId());
        assertEquals(0, r.parentSpanId());
        assertEquals(1_700_000_000_123_456_789L, r.startUnixNs());
        assertEquals(1_700_000_000_223_456_789L, r.endUnixNs());
        assertEquals("shop.checkout", r.scopeName());
        assertEquals("2.1", r.scopeVersion());
        OtlpSpans.Span c = spans.stream().filter(s -> s.name().equals("SELECT cart")).findFirst().orElseThrow();
        assertEquals(0xb7ad6b7169203331L, c.spanId());
        assertEquals(0x00f067aa0ba902b7L, c.parentSpanId());
        assertEquals("jdbc", c.scopeName());
        assertEquals("", c.scopeVersion());

        // Each message is the one the SDK marshals for that span alone.
        assertArrayEquals(spanMessageOf(request(List.of(root))), r.otlp());
        assertArrayEquals(spanMessageOf(request(List.of(child))), c.otlp());
    }

    @Test
    void a_span_ids_high_bit_survives_as_the_unsigned_bits_of_a_long() {
        SpanData s = TestSpanData.builder()
                .setSpanContext(SpanContext.create("ffffffffffffffff8000000000000001", "8000000000000000", TraceFlags.getSampled(), TraceState.getDefault()))
                .setName("x").setKind(SpanKind.INTERNAL).setStartEpochNanos(1).setEndEpochNanos(2)
                .setStatus(StatusData.unset()).setHasEnded(true).build();
        OtlpSpans.Span m = OtlpSpans.of(List.of(s)).get(0);
        assertEquals(-1L, m.traceIdHi());
        assertEquals(0x8000000000000001L, m.traceIdLo());
        assertEquals(Long.MIN_VALUE, m.spanId());
    }

    @Test
    void the_readable_status_code_is_the_sdks_in_otlp_numbers() {
        assertEquals(0, statusCodeOf(StatusData.unset()));
        assertEquals(1, statusCodeOf(StatusData.ok()));
        assertEquals(2, statusCodeOf(StatusData.create(StatusCode.ERROR, "card declined")));
    }

    private static int statusCodeOf(StatusData status) {
        SpanData s = TestSpanData.builder()
                .setSpanContext(SpanContext.create(TRACE, "00f067aa0ba902b7", TraceFlags.getSampled(), TraceState.getDefault()))
                .setName("charge").setKind(SpanKind.INTERNAL).setStartEpochNanos(1).setEndEpochNanos(2)
                .setStatus(status).setHasEnded(true).build();
        return OtlpSpans.of(List.of(s)).get(0).statusCode();
    }

    @Test
    void a_log_record_carries_its_trace_severity_body_scope_and_the_sdks_own_message() throws Exception {
        LogRecordData record = TestLogRecordData.builder()
                .setResource(Resource.empty()).setInstrumentationScopeInfo(SCOPE)
                .setTimestamp(1_700_000_000_123_456_789L, TimeUnit.NANOSECONDS)
                .setObservedTimestamp(Instant.ofEpochSecond(1_700_000_001))
                .setSpanContext(SpanContext.create(TRACE, "00f067aa0ba902b7", TraceFlags.getSampled(), TraceState.getDefault()))
                .setSeverity(Severity.WARN).setSeverityText("WARN").setBody("disk sda full")
                .setAttributes(Attributes.of(AttributeKey.stringKey("disk"), "sda")).setTotalAttributeCount(1)
                .build();
        LogRecordData outside = TestLogRecordData.builder()
                .setResource(Resource.empty()).setInstrumentationScopeInfo(SCOPE)
                .setObservedTimestamp(Instant.ofEpochSecond(1_700_000_002)).setSeverity(Severity.UNDEFINED_SEVERITY_NUMBER)
                .build();
        List<OtlpLogs.Log> logs = OtlpLogs.of(List.of(record, outside));
        assertEquals(2, logs.size());
        OtlpLogs.Log l = logs.get(0);
        assertEquals(0x4bf92f3577b34da6L, l.traceIdHi());
        assertEquals(0xa3ce929d0e0e4736L, l.traceIdLo());
        assertEquals(0x00f067aa0ba902b7L, l.spanId());
        assertEquals(Severity.WARN.getSeverityNumber(), l.severityNumber());
        assertEquals("disk sda full", l.body());
        assertEquals("shop.checkout", l.scopeName());
        assertEquals("2.1", l.scopeVersion());
        assertArrayEquals(logMessageOf(logsRequest(List.of(record))), l.otlp());
        OtlpLogs.Log o = logs.get(1);
        assertEquals(0, o.traceIdHi());
        assertEquals(0, o.spanId());
        assertEquals(0, o.severityNumber());
        assertEquals("", o.body());
    }

    @Test
    void a_message_cut_short_is_refused_with_what_is_wrong() {
        byte[] whole = spanMessageOf(request(List.of(span("00f067aa0ba902b7", null, "GET /cart", SCOPE))));
        byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 3);
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> OtlpSpans.span(cut, "", ""));
        assertTrue(e.getMessage().startsWith("protobuf: "), e.getMessage());
    }

    static byte[] request(List<SpanData> spans) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            TraceRequestMarshaler.create(spans).writeBinaryTo(out);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        return out.toByteArray();
    }

    static byte[] logsRequest(List<LogRecordData> logs) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LogsRequestMarshaler.create(logs).writeBinaryTo(out);
        return out.toByteArray();
    }

    /** The only Span message (request 1 → ScopeSpans 2 → Span 2) of a one-span request. */
    static byte[] spanMessageOf(byte[] request) {
        List<byte[]> found = innermost(request);
        assertEquals(1, found.size());
        return found.get(0);
    }

    static byte[] logMessageOf(byte[] request) {
        return spanMessageOf(request); // the same nesting: 1 → 2 → 2
    }

    private static List<byte[]> innermost(byte[] request) {
        List<byte[]> found = new ArrayList<>();
        Protobuf r = new Protobuf(request);
        while (r.next()) {
            if (r.field() != 1) continue;
            Protobuf resource = r.message();
            while (resource.next()) {
                if (resource.field() != 2) continue;
                Protobuf scope = resource.message();
                while (scope.next()) {
                    if (scope.field() == 2) found.add(scope.bytes());
                }
            }
        }
        return found;
    }
}

package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.OtelSpans;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The sampler while nobody listens to the span events (nobody records in a
 * unit test: on a host without user_events, registration fails and says why;
 * in the guest, it registers and stays disabled): every span is
 * non-recording, nothing reaches an exporter, and the context still
 * propagates, trace id and tracestate, with W3C flags 00.
 */
class UsertraceSamplerTest {
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT = "00f067aa0ba902b7";

    @BeforeAll
    static void nobodyListens() {
        OtelSpans events = Registration.spans();
        assertTrue(events == null || !events.isEnabled(),
                "a recorder listens to " + Registration.provider() + "_otel_span: stop it, this test needs nobody to");
    }

    @Test
    void a_root_span_is_not_recorded_and_its_child_continues_its_trace() {
        InMemorySpanExporter exported = InMemorySpanExporter.create();
        try (SdkTracerProvider provider = tracerProvider(UsertraceSampler.parentBased(), exported)) {
            Tracer tracer = provider.get("shop.web");
            Span root = tracer.spanBuilder("GET /cart").startSpan();
            Span child = tracer.spanBuilder("SELECT cart").setParent(Context.current().with(root)).startSpan();
            child.end();
            root.end();

            assertFalse(root.isRecording(), "root");
            assertFalse(root.getSpanContext().isSampled(), "root");
            assertTrue(root.getSpanContext().isValid(), "a dropped span still has ids to pass on");
            assertFalse(child.isRecording(), "child");
            assertEquals(root.getSpanContext().getTraceId(), child.getSpanContext().getTraceId());
            assertNotEquals(root.getSpanContext().getSpanId(), child.getSpanContext().getSpanId());
            assertEquals(0, exported.getFinishedSpanItems().size(), exported.getFinishedSpanItems().toString());
        }
    }

    /**
     * {@code usertrace} drops even under a sampled caller (nobody records
     * here); {@code parentbased_usertrace} follows a caller that did not sample.
     */
    @ParameterizedTest
    @CsvSource({"usertrace, 01", "parentbased_usertrace, 00"})
    void a_dropped_span_sends_on_the_incoming_trace_id_and_tracestate_with_flags_00(String name, String incomingFlags) {
        Sampler sampler = name.equals("usertrace") ? new UsertraceSampler() : UsertraceSampler.parentBased();
        Map<String, String> incoming = Map.of("traceparent", "00-" + TRACE + "-" + PARENT + "-" + incomingFlags,
                "tracestate", "shop=blue");
        InMemorySpanExporter exported = InMemorySpanExporter.create();
        try (SdkTracerProvider provider = tracerProvider(sampler, exported)) {
            Context caller = W3CTraceContextPropagator.getInstance().extract(Context.root(), incoming, MapGetter.INSTANCE);
            Span server = provider.get("shop.web").spanBuilder("GET /cart").setParent(caller).startSpan();
            Map<String, String> outgoing = new HashMap<>();
            W3CTraceContextPropagator.getInstance().inject(caller.with(server), outgoing, Map::put);
            server.end();

            SpanContext context = server.getSpanContext();
            assertFalse(server.isRecording());
            assertNotEquals(PARENT, context.getSpanId(), "the span's own id goes out");
            assertEquals("00-" + TRACE + "-" + context.getSpanId() + "-00", outgoing.get("traceparent"), outgoing.toString());
            assertEquals("shop=blue", outgoing.get("tracestate"), outgoing.toString());
            assertEquals(0, exported.getFinishedSpanItems().size(), exported.getFinishedSpanItems().toString());
        }
    }

    @Test
    void its_description_names_it_alone_or_as_a_parent_based_root() {
        assertEquals("UsertraceSampler", new UsertraceSampler().getDescription());
        String parentBased = UsertraceSampler.parentBased().getDescription();
        assertTrue(parentBased.startsWith("ParentBased{root:UsertraceSampler,"), parentBased);
    }

    @ParameterizedTest
    @CsvSource({"usertrace, UsertraceSampler", "parentbased_usertrace, ParentBased{root:UsertraceSampler,"})
    void autoconfiguration_finds_it_by_name(String name, String description) {
        AutoConfiguredOpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> Map.of("otel.traces.sampler", name, "otel.traces.exporter", "none",
                        "otel.metrics.exporter", "none", "otel.logs.exporter", "none"))
                .disableShutdownHook().build();
        try {
            String got = sdk.getOpenTelemetrySdk().getSdkTracerProvider().getSampler().getDescription();
            assertTrue(got.startsWith(description), got);
        } finally {
            sdk.getOpenTelemetrySdk().close();
        }
    }

    private static SdkTracerProvider tracerProvider(Sampler sampler, InMemorySpanExporter exported) {
        return SdkTracerProvider.builder().setSampler(sampler).addSpanProcessor(SimpleSpanProcessor.create(exported)).build();
    }

    private enum MapGetter implements TextMapGetter<Map<String, String>> {
        INSTANCE;

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    }
}

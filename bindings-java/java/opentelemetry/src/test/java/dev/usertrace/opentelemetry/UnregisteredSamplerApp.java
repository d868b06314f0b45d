package dev.usertrace.opentelemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.List;

/**
 * Starts a span under each sampler, {@code usertrace} and
 * {@code parentbased_usertrace}, twice, where usertrace cannot register its
 * events (the test starts it with an unusable USERTRACE_TRANSPORT); prints
 * whether each span records, and how many spans reached an exporter.
 */
public final class UnregisteredSamplerApp {
    public static void main(String[] args) {
        for (Sampler sampler : List.of(new UsertraceSampler(), UsertraceSampler.parentBased())) {
            InMemorySpanExporter exported = InMemorySpanExporter.create();
            // With a processor: a provider with none makes no span at all, whatever the sampler says.
            try (SdkTracerProvider provider = SdkTracerProvider.builder().setSampler(sampler)
                    .addSpanProcessor(SimpleSpanProcessor.create(exported)).build()) {
                for (int i = 0; i < 2; i++) {
                    Span span = provider.get("shop.web").spanBuilder("GET /cart").startSpan();
                    System.out.println("recording=" + span.isRecording() + " sampled=" + span.getSpanContext().isSampled());
                    span.end();
                }
                // Before the provider closes: its shutdown clears the exporter.
                System.out.println("exported=" + exported.getFinishedSpanItems().size());
            }
        }
    }
}

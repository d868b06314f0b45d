package dev.usertrace.opentelemetry;

import dev.usertrace.OtelSpans;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;
import java.util.List;

/**
 * Records and samples a span only while a recorder listens to the span events
 * ({@code <provider>_otel_span}): one load per span. Otherwise the span is
 * non-recording: no attributes kept, nothing exported, and its context (trace
 * id, the parent's tracestate) still propagates, so a service nobody records
 * does not cut the trace. As Python's and Rust's samplers.
 *
 * <p>Where usertrace cannot register its events, the process's log says why
 * once (as for the exporters) and every span is dropped: nothing could record
 * it. With the SDK's autoconfiguration: {@code otel.traces.sampler=usertrace},
 * or {@code parentbased_usertrace} for {@link #parentBased()}.
 */
public final class UsertraceSampler implements Sampler {
    private static final String DESCRIPTION = "UsertraceSampler";

    /** Null where usertrace cannot register them: then nothing is ever sampled. */
    private final OtelSpans events;

    /** Registers the process's span events (once for every exporter and sampler). */
    public UsertraceSampler() {
        this.events = Registration.spans();
    }

    /**
     * A span with a parent follows its parent's decision; a root span, this
     * sampler's ({@code otel.traces.sampler=parentbased_usertrace}).
     */
    public static Sampler parentBased() {
        return Sampler.parentBased(new UsertraceSampler());
    }

    @Override
    public SamplingResult shouldSample(Context parentContext, String traceId, String name, SpanKind spanKind,
            Attributes attributes, List<LinkData> parentLinks) {
        // Both results keep the parent's tracestate (SamplingResult's default),
        // so a dropped span still passes it on.
        return listened() ? SamplingResult.recordAndSample() : SamplingResult.drop();
    }

    /** Whether a recorder listens to the span events now. */
    private boolean listened() {
        return events != null && events.isEnabled();
    }

    @Override
    public String getDescription() {
        return DESCRIPTION;
    }

    @Override
    public String toString() {
        return getDescription();
    }
}

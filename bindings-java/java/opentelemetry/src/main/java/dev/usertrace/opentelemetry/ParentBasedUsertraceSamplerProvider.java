package dev.usertrace.opentelemetry;

import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSamplerProvider;
import io.opentelemetry.sdk.trace.samplers.Sampler;

/**
 * {@code otel.traces.sampler=parentbased_usertrace}: a span with a parent
 * follows its parent's decision, a root span {@link UsertraceSampler}'s; for
 * the SDK's autoconfiguration and the Java agent.
 */
public final class ParentBasedUsertraceSamplerProvider implements ConfigurableSamplerProvider {
    @Override
    public Sampler createSampler(ConfigProperties config) {
        return UsertraceSampler.parentBased();
    }

    @Override
    public String getName() {
        return "parentbased_usertrace";
    }
}

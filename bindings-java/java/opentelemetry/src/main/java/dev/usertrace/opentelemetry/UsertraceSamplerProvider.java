package dev.usertrace.opentelemetry;

import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSamplerProvider;
import io.opentelemetry.sdk.trace.samplers.Sampler;

/** {@code otel.traces.sampler=usertrace}, for the SDK's autoconfiguration and the Java agent. */
public final class UsertraceSamplerProvider implements ConfigurableSamplerProvider {
    @Override
    public Sampler createSampler(ConfigProperties config) {
        return new UsertraceSampler();
    }

    @Override
    public String getName() {
        return "usertrace";
    }
}

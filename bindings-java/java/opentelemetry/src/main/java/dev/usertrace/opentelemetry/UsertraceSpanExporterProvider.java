package dev.usertrace.opentelemetry;

import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSpanExporterProvider;
import io.opentelemetry.sdk.trace.export.SpanExporter;

/** {@code otel.traces.exporter=usertrace}, for the SDK's autoconfiguration and the Java agent. */
public final class UsertraceSpanExporterProvider implements ConfigurableSpanExporterProvider {
    @Override
    public SpanExporter createExporter(ConfigProperties config) {
        return new UsertraceSpanExporter();
    }

    @Override
    public String getName() {
        return "usertrace";
    }
}

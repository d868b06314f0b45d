package dev.usertrace.opentelemetry;

import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.logs.ConfigurableLogRecordExporterProvider;
import io.opentelemetry.sdk.logs.export.LogRecordExporter;

/** {@code otel.logs.exporter=usertrace}, for the SDK's autoconfiguration and the Java agent. */
public final class UsertraceLogRecordExporterProvider implements ConfigurableLogRecordExporterProvider {
    @Override
    public LogRecordExporter createExporter(ConfigProperties config) {
        return new UsertraceLogRecordExporter();
    }

    @Override
    public String getName() {
        return "usertrace";
    }
}

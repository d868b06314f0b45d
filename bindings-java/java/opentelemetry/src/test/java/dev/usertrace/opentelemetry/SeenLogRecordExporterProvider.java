package dev.usertrace.opentelemetry;

import io.opentelemetry.exporter.internal.otlp.logs.LogsRequestMarshaler;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.logs.ConfigurableLogRecordExporterProvider;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import io.opentelemetry.sdk.logs.export.LogRecordExporter;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.Collection;

/**
 * The test's second exporter ({@code otel.logs.exporter=usertrace,seen}):
 * writes each batch of log records the SDK exports as the OTLP request its OTLP exporter would
 * send, length-prefixed like the Collector's file, to {@code -Dseen.logs.file}, so
 * the test compares what arrived with what the SDK saw, record for record.
 */
public final class SeenLogRecordExporterProvider implements ConfigurableLogRecordExporterProvider {
    @Override
    public LogRecordExporter createExporter(ConfigProperties config) {
        String file = config.getString("seen.logs.file");
        if (file == null) {
            throw new IllegalStateException("set -Dseen.logs.file");
        }
        return new LogRecordExporter() {
            @Override
            public synchronized CompletableResultCode export(Collection<LogRecordData> records) {
                ByteArrayOutputStream request = new ByteArrayOutputStream();
                try (DataOutputStream out = new DataOutputStream(new FileOutputStream(file, true))) {
                    LogsRequestMarshaler.create(records).writeBinaryTo(request);
                    out.writeInt(request.size());
                    request.writeTo(out);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode flush() {
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
    }

    @Override
    public String getName() {
        return "seen";
    }
}

package dev.usertrace.opentelemetry;

import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSpanExporterProvider;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.Collection;

/**
 * The test's second exporter ({@code otel.traces.exporter=usertrace,seen}):
 * writes each batch the SDK exports as the OTLP request its OTLP exporter would
 * send, length-prefixed like the Collector's file, to {@code -Dseen.file}, so
 * the test compares what arrived with what the SDK saw, span for span.
 */
public final class SeenSpanExporterProvider implements ConfigurableSpanExporterProvider {
    @Override
    public SpanExporter createExporter(ConfigProperties config) {
        String file = config.getString("seen.file");
        if (file == null) {
            throw new IllegalStateException("set -Dseen.file");
        }
        return new SpanExporter() {
            @Override
            public synchronized CompletableResultCode export(Collection<SpanData> spans) {
                ByteArrayOutputStream request = new ByteArrayOutputStream();
                try (DataOutputStream out = new DataOutputStream(new FileOutputStream(file, true))) {
                    TraceRequestMarshaler.create(spans).writeBinaryTo(request);
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

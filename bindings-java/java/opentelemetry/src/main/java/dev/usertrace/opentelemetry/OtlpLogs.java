package dev.usertrace.opentelemetry;

import io.opentelemetry.exporter.internal.otlp.logs.LogsRequestMarshaler;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A batch of log records as the SDK's own OTLP exporter would send them: each
 * {@code LogRecord} message of the SDK's request becomes one event.
 */
final class OtlpLogs {
    private OtlpLogs() {}

    /** One record of the request: its readable fields and its {@code LogRecord} message. */
    record Log(long traceIdHi, long traceIdLo, long spanId, int severityNumber, String body, String scopeName,
            String scopeVersion, byte[] otlp) {}

    static List<Log> of(Collection<LogRecordData> batch) {
        List<Log> logs = new ArrayList<>(batch.size());
        // ExportLogsServiceRequest.resource_logs (1) → ScopeLogs (2) → LogRecord (2).
        Protobuf request = new Protobuf(marshal(batch));
        while (request.next()) {
            if (request.field() == 1 && request.wireType() == Protobuf.LEN) {
                Protobuf resourceLogs = request.message();
                while (resourceLogs.next()) {
                    if (resourceLogs.field() == 2 && resourceLogs.wireType() == Protobuf.LEN) {
                        scopeLogs(resourceLogs.message(), logs);
                    }
                }
            }
        }
        return logs;
    }

    private static void scopeLogs(Protobuf scopeLogs, List<Log> into) {
        String[] scope = {"", ""};
        List<byte[]> messages = new ArrayList<>();
        while (scopeLogs.next()) {
            if (scopeLogs.wireType() != Protobuf.LEN) {
                continue;
            }
            if (scopeLogs.field() == 1) {
                scope = Scope.of(scopeLogs.message());
            } else if (scopeLogs.field() == 2) {
                messages.add(scopeLogs.bytes());
            }
        }
        for (byte[] message : messages) {
            into.add(log(message, scope[0], scope[1]));
        }
    }

    /** The readable fields of a {@code LogRecord} message (opentelemetry/proto/logs/v1/logs.proto). */
    static Log log(byte[] message, String scopeName, String scopeVersion) {
        long hi = 0, lo = 0, spanId = 0;
        int severity = 0;
        String body = "";
        Protobuf p = new Protobuf(message);
        while (p.next()) {
            switch (p.field()) {
                case 2 -> severity = (int) p.number();
                case 5 -> body = stringValue(p.message());
                case 9 -> { hi = p.traceIdHalf(0); lo = p.traceIdHalf(1); }
                case 10 -> spanId = p.id();
                default -> { }
            }
        }
        return new Log(hi, lo, spanId, severity, body, scopeName, scopeVersion, message);
    }

    /** An {@code AnyValue}'s string_value (1); "" for a body of another type, as Python's exporter. */
    private static String stringValue(Protobuf anyValue) {
        String s = "";
        while (anyValue.next()) {
            if (anyValue.field() == 1 && anyValue.wireType() == Protobuf.LEN) {
                s = anyValue.string();
            }
        }
        return s;
    }

    private static byte[] marshal(Collection<LogRecordData> batch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            LogsRequestMarshaler.create(batch).writeBinaryTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException("usertrace: the SDK's OTLP marshaler failed", e);
        }
        return out.toByteArray();
    }
}

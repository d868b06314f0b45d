package dev.usertrace.opentelemetry;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A file of OTLP trace messages, each after its 4-byte big-endian length: what
 * the Collector's file exporter writes with {@code format: proto}, and what
 * {@link SeenSpanExporterProvider} writes of the requests the SDK made. Read
 * back span by span, with the scope each came under. Log files nest the same
 * way (resource_logs 1 → scope_logs 2 → scope 1, log_records 2), so they are
 * read alike, a {@code LogRecord} message in place of each {@code Span}.
 */
final class OtlpFile {
    private OtlpFile() {}

    /**
     * One span as it arrived: its scope and its whole {@code Span} message,
     * equal to another with the same content ({@link Canonical}).
     */
    record Arrived(String scopeName, String scopeVersion, byte[] span) {
        OtlpSpans.Span readable() {
            return OtlpSpans.span(span, scopeName, scopeVersion);
        }

        String spanIdHex() {
            return String.format("%016x", readable().spanId());
        }

        @Override
        public String toString() {
            OtlpSpans.Span r = readable();
            return r.name() + "[" + spanIdHex() + " in " + scopeName + " " + scopeVersion + ": "
                    + HexFormat.of().formatHex(span) + "]";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Arrived a && a.scopeName.equals(scopeName) && a.scopeVersion.equals(scopeVersion)
                    && Canonical.of(a.span).equals(Canonical.of(span));
        }

        @Override
        public int hashCode() {
            return Canonical.of(span).hashCode();
        }
    }

    static List<Arrived> spans(Path file) throws IOException {
        List<Arrived> spans = new ArrayList<>();
        for (byte[] message : messages(file)) {
            read(message, spans);
        }
        return spans;
    }

    /**
     * The file's messages, each after its 4-byte length; none for a file not
     * written yet, and not the last one while it is still being written.
     */
    private static List<byte[]> messages(Path file) throws IOException {
        List<byte[]> messages = new ArrayList<>();
        if (!Files.exists(file)) {
            return messages;
        }
        ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(file));
        while (in.remaining() >= 4) {
            int len = in.getInt();
            if (len > in.remaining()) {
                break; // still being written
            }
            byte[] message = new byte[len];
            in.get(message);
            messages.add(message);
        }
        return messages;
    }

    /**
     * The resource of each ResourceSpans or ResourceLogs (1) of the file, in
     * order: its attributes (a {@code Resource}'s field 1), each a
     * {@code KeyValue} message.
     */
    static List<List<byte[]>> resources(Path file) throws IOException {
        List<List<byte[]>> resources = new ArrayList<>();
        for (byte[] message : messages(file)) {
            Protobuf request = new Protobuf(message);
            while (request.next()) {
                if (request.field() != 1) continue;
                Protobuf resourceItems = request.message();
                List<byte[]> attributes = new ArrayList<>();
                while (resourceItems.next()) {
                    if (resourceItems.field() != 1) continue;
                    Protobuf resource = resourceItems.message();
                    while (resource.next()) {
                        if (resource.field() == 1) attributes.add(resource.bytes());
                    }
                }
                resources.add(attributes);
            }
        }
        return resources;
    }

    /** A {@code KeyValue} message's key (1). */
    static String key(byte[] keyValue) {
        Protobuf p = new Protobuf(keyValue);
        String key = "";
        while (p.next()) {
            if (p.field() == 1) key = p.string();
        }
        return key;
    }

    /** TracesData or ExportTraceServiceRequest: resource_spans 1 → scope_spans 2 → (scope 1, spans 2). */
    private static void read(byte[] message, List<Arrived> into) {
        Protobuf request = new Protobuf(message);
        while (request.next()) {
            if (request.field() != 1) continue;
            Protobuf resource = request.message();
            while (resource.next()) {
                if (resource.field() != 2) continue;
                Protobuf scopeSpans = resource.message();
                String[] scope = {"", ""};
                List<byte[]> messages = new ArrayList<>();
                while (scopeSpans.next()) {
                    if (scopeSpans.field() == 1) scope = Scope.of(scopeSpans.message());
                    if (scopeSpans.field() == 2) messages.add(scopeSpans.bytes());
                }
                for (byte[] span : messages) into.add(new Arrived(scope[0], scope[1], span));
            }
        }
    }
}

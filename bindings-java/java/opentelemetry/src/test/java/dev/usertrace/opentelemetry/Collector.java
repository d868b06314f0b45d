package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A real OpenTelemetry Collector (OTLP/HTTP in, the file exporter out, as
 * length-prefixed protobuf: traces.pb and logs.pb), the one harness/build-otel-components builds.
 */
final class Collector implements AutoCloseable {
    final String endpoint;
    final Path traces;
    final Path logs;
    private final Path log;
    private final Process process;

    private Collector(String endpoint, Path traces, Path logs, Path log, Process process) {
        this.endpoint = endpoint;
        this.traces = traces;
        this.logs = logs;
        this.log = log;
        this.process = process;
    }

    /**
     * The Collector harness/build-otel-components built; if it is not there
     * yet, that script builds it, or waits for the build test-all runs
     * beside the bindings' suites.
     */
    static Path binary() throws IOException, InterruptedException {
        String cache = System.getenv("USERTRACE_CACHE");
        Path base = cache == null || cache.isEmpty() ? Path.of(System.getProperty("user.home"), ".cache", "usertrace") : Path.of(cache);
        Path binary = base.resolve("bin/otelcol");
        if (!Files.isExecutable(binary)) {
            Path build = buildScript();
            Process made = new ProcessBuilder(build.toString()).redirectErrorStream(true).start();
            String output = new String(made.getInputStream().readAllBytes());
            assertTrue(made.waitFor() == 0, "harness/build-otel-components failed:\n" + output);
        }
        assertTrue(Files.isExecutable(binary), "build the Collector with harness/build-otel-components: no " + binary);
        return binary;
    }

    /** harness/build-otel-components, found above the working directory. */
    private static Path buildScript() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path script = dir.resolve("harness/build-otel-components");
            if (Files.isExecutable(script)) {
                return script;
            }
        }
        throw new AssertionError("no harness/build-otel-components above " + Path.of("").toAbsolutePath());
    }

    static Collector start(Path dir) throws Exception {
        Path binary = binary();
        int port = freePort();
        Path traces = dir.resolve("traces.pb");
        Path logs = dir.resolve("logs.pb");
        Path config = dir.resolve("otelcol.yaml");
        Files.writeString(config, "receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:" + port + "\n"
                + "exporters:\n  file:\n    path: " + traces + "\n    format: proto\n    flush_interval: 100ms\n"
                + "  file/logs:\n    path: " + logs + "\n    format: proto\n    flush_interval: 100ms\n"
                + "service:\n  telemetry:\n    metrics:\n      level: none\n"
                + "  pipelines:\n    traces:\n      receivers: [otlp]\n      exporters: [file]\n"
                + "    logs:\n      receivers: [otlp]\n      exporters: [file/logs]\n");
        Path log = dir.resolve("otelcol.log");
        Process p = new ProcessBuilder(binary.toString(), "--config", "file:" + config)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Collector c = new Collector("http://127.0.0.1:" + port, traces, logs, log, p);
        try {
            c.waitListening(port);
        } catch (Exception | AssertionError e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** The spans written so far, once there are at least {@code count} (or 30 s passed). */
    List<OtlpFile.Arrived> spans(int count) throws Exception {
        return arrived(traces, count);
    }

    /** The log records written so far, as {@link #spans(int)}. */
    List<OtlpFile.Arrived> logs(int count) throws Exception {
        return arrived(logs, count);
    }

    private static List<OtlpFile.Arrived> arrived(Path file, int count) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            List<OtlpFile.Arrived> spans = OtlpFile.spans(file);
            if (spans.size() >= count || System.nanoTime() > deadline) {
                return spans;
            }
            Thread.sleep(100);
        }
    }

    String log() throws IOException {
        return Files.exists(log) ? Files.readString(log) : "";
    }

    private void waitListening(int port) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return;
            } catch (IOException e) {
                assertTrue(process.isAlive(), "the Collector exited: " + log());
                assertTrue(System.nanoTime() < deadline, "the Collector did not listen in 60 s: " + log());
                Thread.sleep(100);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws Exception {
        process.destroyForcibly();
        process.waitFor();
    }
}

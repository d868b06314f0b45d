package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application on the SDK's autoconfiguration with
 * {@code otel.traces.sampler=parentbased_usertrace} and
 * {@code otel.traces.exporter=usertrace,seen}: run alone, no exporter sees a
 * span and the trace still propagates; run under {@code usertrace record
 * --otlp} to a real Collector, its spans are sampled and arrive as the SDK
 * exported them, with their names and ids.
 *
 * <p>Over shared memory (USERTRACE_TRANSPORT=shm for the recorder and the
 * application), as {@link SdkSpansReachACollectorAsTheSdkSawThemIT}.
 */
@Tag("host")
class SampledSpansAreRecordedOnlyWhileARecorderListensIT {
    @TempDir
    Path dir;

    @Test
    void run_alone_no_exporter_sees_a_span_and_the_traceparent_goes_out_unsampled() throws Exception {
        String provider = "jsampoff" + ProcessHandle.current().pid();
        Path seen = dir.resolve("seen.pb");
        String console = runAlone(provider, command(seen, ""));
        assertEquals("false", Recorded.printed(console, "recording"), console);
        String trace = Recorded.printed(console, "trace");
        String query = Recorded.printed(console, "query");
        Traceparent sent = Traceparent.parse(Recorded.printed(console, "traceparent"));
        assertEquals(new Traceparent(trace, query, sent.flags()), sent, console);
        assertFalse(sent.sampled(), console);
        assertEquals(List.of(), OtlpFile.spans(seen), console);
        // Over shared memory usertrace registers: nothing to say.
        assertFalse(console.contains("will not be recorded"), console);
    }

    @Test
    void under_usertrace_record_every_span_arrives_with_its_name_and_ids() throws Exception {
        String provider = "jsampon" + ProcessHandle.current().pid();
        Path seen = dir.resolve("seen.pb");
        try (Collector collector = Collector.start(dir)) {
            String console = Recorded.run(provider, collector.endpoint, dir, command(seen, "recorded"));
            assertEquals("true", Recorded.printed(console, "recording"), console);
            List<OtlpFile.Arrived> sdk = SdkSpansReachACollectorAsTheSdkSawThemIT.sorted(OtlpFile.spans(seen));
            assertEquals(2, sdk.size(), "the SDK exported " + sdk + "\n" + console);
            List<OtlpFile.Arrived> arrived = SdkSpansReachACollectorAsTheSdkSawThemIT.sorted(collector.spans(sdk.size()));
            assertEquals(sdk, arrived, "console:\n" + console + "\ncollector:\n" + collector.log());

            String trace = Recorded.printed(console, "trace");
            String request = Recorded.printed(console, "request");
            String query = Recorded.printed(console, "query");
            Traceparent sent = Traceparent.parse(Recorded.printed(console, "traceparent"));
            assertEquals(new Traceparent(trace, query, sent.flags()), sent, console);
            assertTrue(sent.sampled(), console);
            OtlpSpans.Span get = SdkSpansReachACollectorAsTheSdkSawThemIT.byName(arrived, "GET /cart");
            OtlpSpans.Span select = SdkSpansReachACollectorAsTheSdkSawThemIT.byName(arrived, "SELECT cart");
            for (OtlpSpans.Span s : List.of(get, select)) {
                assertEquals(trace, String.format("%016x%016x", s.traceIdHi(), s.traceIdLo()), s.name());
            }
            assertEquals(request, String.format("%016x", get.spanId()));
            assertEquals(0, get.parentSpanId());
            assertEquals(query, String.format("%016x", select.spanId()));
            assertEquals(get.spanId(), select.parentSpanId());
        }
    }

    private static List<String> command(Path seen, String mode) {
        List<String> command = new ArrayList<>(List.of(Cli.java(), "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                "-Dotel.traces.sampler=parentbased_usertrace", "-Dotel.traces.exporter=usertrace,seen",
                "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none", "-Dotel.service.name=shop",
                "-Dseen.file=" + seen, "-cp", System.getProperty("java.class.path"), SampledApp.class.getName()));
        if (!mode.isEmpty()) {
            command.add(mode);
        }
        return command;
    }

    /** The application with no recorder, over shared memory as under one; returns what it printed. */
    private String runAlone(String provider, List<String> command) throws Exception {
        Path console = dir.resolve("alone.txt");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(console.toFile());
        pb.environment().put("USERTRACE_TRANSPORT", "shm");
        pb.environment().put("USERTRACE_OTEL_PROVIDER", provider);
        Process p = pb.start();
        boolean ended = p.waitFor(120, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly().waitFor();
        }
        String out = Files.readString(console);
        assertTrue(ended, "the application did not finish in 120 s: " + out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}

package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one-line switch: {@code java -javaagent:opentelemetry-javaagent.jar
 * -Dotel.javaagent.extensions=usertrace-opentelemetry.jar
 * -Dotel.traces.exporter=usertrace -jar app.jar}, under {@code usertrace record
 * --otlp} to a real Collector. The spans the agent makes of an HTTP call (the
 * java.net.http client's, the JDK server's) arrive as the agent's SDK saw them
 * (compared span for span with a second exporter, {@code seen}, loaded as a
 * second extension), in the trace whose context the call carried.
 */
@Tag("host")
class AgentSpansReachACollectorIT {
    @TempDir
    Path dir;

    @Test
    void the_agents_http_spans_arrive_exactly_with_the_context_the_call_carried() throws Exception {
        Path agent = Built.file("opentelemetry.javaagent.jar",
                "the OpenTelemetry Java agent (mvn verify fetches it into target/opentelemetry-javaagent.jar)");
        Path extension = Built.file("usertrace.opentelemetry.jar", "this module's jar (mvn package)");
        Path seenJar = SeenExtensionJar.write(dir);
        String provider = "jagent" + ProcessHandle.current().pid();
        Path seen = dir.resolve("seen.pb");
        Path classes = Path.of(AgentApp.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        try (Collector collector = Collector.start(dir)) {
            String console = Recorded.run(provider, collector.endpoint, dir, List.of(Cli.java(),
                    "-javaagent:" + agent, "-Dotel.javaagent.extensions=" + extension + "," + seenJar,
                    "-Dotel.traces.exporter=usertrace,seen", "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none",
                    "-Dotel.service.name=shop", "-Dseen.file=" + seen,
                    "-cp", classes.toString(), AgentApp.class.getName()));
            assertEquals("200", Recorded.printed(console, "status"), console);
            List<OtlpFile.Arrived> sdk = SdkSpansReachACollectorAsTheSdkSawThemIT.sorted(OtlpFile.spans(seen));
            // The java.net.http client's span and the JDK server's (agent 2.x instruments both).
            assertEquals(2, sdk.size(), "the agent exported " + sdk + "\n" + console);
            List<OtlpFile.Arrived> arrived = SdkSpansReachACollectorAsTheSdkSawThemIT.sorted(collector.spans(sdk.size()));
            assertEquals(sdk, arrived, "console:\n" + console + "\ncollector:\n" + collector.log());

            // The client span is the one whose context the call carried.
            String[] traceparent = Recorded.printed(console, "traceparent").split("-");
            OtlpFile.Arrived client = arrived.stream().filter(a -> a.spanIdHex().equals(traceparent[2])).findFirst()
                    .orElseThrow(() -> new AssertionError("no span " + traceparent[2] + " in " + arrived + "\n" + console));
            OtlpSpans.Span c = client.readable();
            assertEquals(traceparent[1], String.format("%016x%016x", c.traceIdHi(), c.traceIdLo()));
            assertEquals("GET", c.name());
            assertEquals(SpanKindField.CLIENT, SpanKindField.of(client.span()), client.toString());
            assertTrue(client.scopeName().startsWith("io.opentelemetry."), client.scopeName());
            OtlpFile.Arrived server = arrived.stream().filter(a -> a != client).findFirst().orElseThrow();
            OtlpSpans.Span sv = server.readable();
            assertEquals(SpanKindField.SERVER, SpanKindField.of(server.span()), server.toString());
            assertEquals("GET /cart", sv.name());
            assertEquals(c.spanId(), sv.parentSpanId(), "the server span is the client's child");
            assertEquals(c.traceIdLo(), sv.traceIdLo());
            assertEquals(c.traceIdHi(), sv.traceIdHi());
        }
    }
}

package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java agent finds the sampler in the extension
 * ({@code -Dotel.traces.sampler=parentbased_usertrace}): with no recorder, the
 * agent's HTTP spans are dropped (the {@code seen} exporter, a second
 * extension, sees none) and the call still carries the trace, its sampled flag clear.
 * Over shared memory, so usertrace registers and nobody listens.
 */
@Tag("host")
class AgentWithTheUsertraceSamplerIT {
    @TempDir
    Path dir;

    @Test
    void with_no_recorder_the_agents_spans_are_dropped_and_the_call_carries_an_unsampled_traceparent() throws Exception {
        Path agent = Built.file("opentelemetry.javaagent.jar",
                "the OpenTelemetry Java agent (mvn verify fetches it into target/opentelemetry-javaagent.jar)");
        Path extension = Built.file("usertrace.opentelemetry.jar", "this module's jar (mvn package)");
        Path seen = dir.resolve("seen.pb");
        Path classes = Path.of(AgentApp.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path console = dir.resolve("console.txt");
        ProcessBuilder pb = new ProcessBuilder(Cli.java(), "-javaagent:" + agent,
                "-Dotel.javaagent.extensions=" + extension + "," + SeenExtensionJar.write(dir),
                "-Dotel.traces.sampler=parentbased_usertrace", "-Dotel.traces.exporter=usertrace,seen",
                "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none", "-Dseen.file=" + seen,
                "-cp", classes.toString(), AgentApp.class.getName())
                .redirectErrorStream(true).redirectOutput(console.toFile());
        pb.environment().put("USERTRACE_TRANSPORT", "shm");
        pb.environment().put("USERTRACE_OTEL_PROVIDER", "jagentsamp" + ProcessHandle.current().pid());
        Process p = pb.start();
        boolean ended = p.waitFor(300, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly().waitFor();
        }
        String out = Files.readString(console);
        assertTrue(ended, "the application did not finish in 300 s: " + out);
        assertEquals(0, p.exitValue(), out);
        assertEquals("200", Recorded.printed(out, "status"), out);
        assertFalse(Traceparent.parse(Recorded.printed(out, "traceparent")).sampled(), out);
        assertEquals(List.of(), OtlpFile.spans(seen), out);
    }
}

package dev.usertrace.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs {@link SampleApp} in a JVM with {@code -javaagent:usertrace-agent.jar=options}. */
final class AgentRun {
    private AgentRun() {}

    static Path agentJar() {
        String jar = System.getProperty("usertrace.agent.jar");
        assertTrue(jar != null && Files.isRegularFile(Path.of(jar)),
                "set -Dusertrace.agent.jar to the built usertrace-agent.jar (mvn package); got " + jar);
        return Path.of(jar);
    }

    /** Stdout and stderr of the run, which must exit 0. */
    static String run(String options, String... appArgs) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-javaagent:" + agentJar() + (options.isEmpty() ? "" : "=" + options));
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(SampleApp.class.getName());
        cmd.addAll(List.of(appArgs));
        // Output to a file, not a pipe: a JVM that does not exit must fail the
        // test after the timeout, not block a read forever.
        Path log = Files.createTempFile("usertrace-agent-run", ".log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean exited = p.waitFor(300, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
            String out = new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
            assertTrue(exited, "the sample app's JVM did not exit within 300 s: " + out);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("sample: done"), out);
            return out;
        } finally {
            Files.deleteIfExists(log);
        }
    }
}

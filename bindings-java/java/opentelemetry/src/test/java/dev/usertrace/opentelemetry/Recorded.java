package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code usertrace record -e '<provider>_*' --otlp ENDPOINT -- COMMAND} over
 * shared memory: the recorder and the recorded JVM both take
 * USERTRACE_TRANSPORT=shm, so the test runs where the kernel has no user_events.
 */
final class Recorded {
    private Recorded() {}

    /** Runs it to its end; returns what the recorder and the application printed. */
    static String run(String provider, String endpoint, Path dir, List<String> command) throws Exception {
        List<String> argv = new ArrayList<>(List.of(Cli.path().toString(), "record", "-e", provider + "_*",
                "--otlp", endpoint, "--"));
        argv.addAll(command);
        Path console = dir.resolve("console.txt");
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(console.toFile());
        pb.environment().put("USERTRACE_TRANSPORT", "shm");
        pb.environment().put("USERTRACE_OTEL_PROVIDER", provider);
        Process p = pb.start();
        boolean ended = p.waitFor(300, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly().waitFor();
        }
        String out = Files.readString(console);
        assertTrue(ended, "usertrace record did not finish in 300 s: " + out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    /** The value the application printed as {@code key=value}. */
    static String printed(String console, String key) {
        Matcher m = Pattern.compile("(?m)(?:^|\\s)" + key + "=(\\S+)$").matcher(console);
        assertTrue(m.find(), key + "= in " + console);
        return m.group(1);
    }
}

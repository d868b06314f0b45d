package dev.usertrace.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.Status;
import dev.usertrace.Usertrace;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * For the {@code kernel} tests: {@code usertrace record --format json -e EVENT -- java -cp
 * <this class path> MAIN}, with the CLI of {@code -Dusertrace.cli} (run-tests.sh passes
 * {@code target/debug/usertrace}), as the API's UsertraceRecordShowsTheExactValuesTest does.
 */
public final class Recording {
    /** What the recorded JVM printed, and the recorded lines of the event. */
    public final String console;
    public final List<String> events;

    private Recording(String console, List<String> events) {
        this.console = console;
        this.events = events;
    }

    /** Fails, never skips, without user_events. */
    public static void requireKernel() {
        Status s = Usertrace.status();
        assertTrue(s.isAvailable(), "this test needs user_events (run it with run-tests.sh guest): " + s.message());
    }

    /**
     * {@code tempPrefix} begins the names of the recording's temporary files
     * (removed when it ends), e.g. {@code usertrace-logback-record}: a file
     * left by a killed run says which module's test made it.
     */
    public static Recording of(String tempPrefix, String event, Class<?> main) throws Exception {
        String cli = System.getProperty("usertrace.cli");
        assertTrue(cli != null && Files.isExecutable(Path.of(cli)),
                "set -Dusertrace.cli to the usertrace CLI (cargo build -p usertrace-cli); got " + cli);
        Path out = Files.createTempFile(tempPrefix, ".json");
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String console = ProcessConsole.of(new ProcessBuilder(cli, "record", "--format", "json", "-e", event,
                    "-o", out.toString(), "--", java, "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                    "-cp", System.getProperty("java.class.path"), main.getName()), "usertrace record", tempPrefix);
            String json = new String(Files.readAllBytes(out), StandardCharsets.UTF_8);
            List<String> lines = json.lines().filter(l -> l.contains("\"event\":\"" + event + "\""))
                    .collect(Collectors.toList());
            return new Recording(console + "\nrecorded:\n" + json, lines);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** A value of the line's header (pid, tid, comm, process), as JSON text. */
    public static String header(String line, String name) {
        int fields = line.indexOf("\"fields\":");
        return value(fields < 0 ? line : line.substring(0, fields), name, line);
    }

    /** A field of the event, as JSON text: {@code 900}, {@code "disk sda full"}. */
    public static String field(String line, String name) {
        int fields = line.indexOf("\"fields\":");
        assertTrue(fields >= 0, "no fields in " + line);
        return value(line.substring(fields), name, line);
    }

    private static String value(String part, String name, String line) {
        Matcher m = Pattern.compile("\"" + name + "\":(\"(?:[^\"\\\\]|\\\\.)*\"|[^,}]*)").matcher(part);
        assertTrue(m.find(), name + " in " + line);
        return m.group(1);
    }

    /**
     * The value a child printed as {@code key=value}. The child's stdout and
     * the recorder's stderr share the console, so the line may begin with the
     * recorder's words ({@code usertrace record: 5 events, 0 lost, pid=22488},
     * seen in the guest).
     */
    public static String printed(String console, String key) {
        Matcher m = Pattern.compile("(?m)(?:^|\\s)" + key + "=(\\S+)$").matcher(console);
        assertTrue(m.find(), key + "= in " + console);
        return m.group(1);
    }
}

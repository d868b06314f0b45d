package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * In the guest kernel: {@code usertrace record --format json -- java ...} sees
 * the exact values a Java process emitted. The CLI is {@code -Dusertrace.cli}
 * (run-tests.sh passes {@code $CARGO_TARGET_DIR/debug/usertrace}).
 */
@Tag("kernel")
// Needs only `usertrace record`: also run natively over shared memory.
@Tag("recorder")
class UsertraceRecordShowsTheExactValuesTest {
    /** The recorded process: registers, waits for the recorder to attach, emits, exits. */
    public static final class Emitter {
        public static void main(String[] args) throws Exception {
            try (Provider p = new Provider("jrec")) {
                Tracepoint tp = p.tracepoint("values", Field.u32("seq"), Field.i64("neg"), Field.string("msg"),
                        Field.f64("x"), Field.bool("ok"), Field.u64("big"));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!tp.isEnabled() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                if (!tp.isEnabled()) {
                    System.out.println("emitter: usertrace record did not attach within 60 s");
                    System.exit(3);
                }
                for (int seq = 1; seq <= 5; seq++) {
                    tp.event().put(seq).put(-42L * seq).put("rec \"héllo\" " + seq).put(seq + 0.5).put(seq % 2 == 0)
                            .put(-seq).emit();
                }
            }
            System.out.println("emitter: done");
        }
    }

    static Path cli() {
        String cli = System.getProperty("usertrace.cli");
        assertTrue(cli != null && Files.isExecutable(Path.of(cli)),
                "set -Dusertrace.cli to the usertrace CLI (cargo build -p usertrace-cli); got " + cli);
        return Path.of(cli);
    }

    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(\"(?:[^\"\\\\]|\\\\.)*\"|[^,}]*)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return m.group(1);
    }

    @Test
    void usertrace_record_shows_the_exact_values() throws Exception {
        Kernel.requireRecorder();
        Path cli = cli();
        Path out = Files.createTempFile("usertrace-java-record", ".json");
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process rec = new ProcessBuilder(cli.toString(), "record", "--format", "json", "-e", "jrec_*",
                    "-o", out.toString(), "--", java, "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                    "-cp", System.getProperty("java.class.path"), Emitter.class.getName())
                    .redirectErrorStream(true).start();
            String console = new String(rec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(rec.waitFor(300, TimeUnit.SECONDS), "usertrace record did not finish: " + console);
            assertEquals(0, rec.exitValue(), console);
            assertTrue(console.contains("emitter: done"), console);
            String json = Files.readString(out);
            List<String> lines = json.lines().filter(l -> l.contains("\"event\":\"jrec_values\""))
                    .collect(Collectors.toList());
            assertEquals(5, lines.size(), "events recorded:\n" + json + "\n" + console);
            for (int i = 0; i < 5; i++) {
                String line = lines.get(i);
                long seq = i + 1;
                assertEquals(String.valueOf(seq), field(line, "seq"), line);
                assertEquals(String.valueOf(-42L * seq), field(line, "neg"), line);
                assertEquals("\"rec \\\"héllo\\\" " + seq + "\"", field(line, "msg"), line);
                assertEquals(seq + 0.5, Double.parseDouble(field(line, "x")), line);
                assertEquals(String.valueOf(seq % 2 == 0), field(line, "ok"), line);
                assertEquals(Long.toUnsignedString(-seq), field(line, "big"), line);
            }
        } finally {
            Files.deleteIfExists(out);
        }
    }
}

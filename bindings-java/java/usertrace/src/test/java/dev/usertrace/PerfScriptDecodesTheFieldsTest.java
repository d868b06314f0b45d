package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** In the guest kernel: perf record + perf script see the values Java emitted. */
@Tag("kernel")
class PerfScriptDecodesTheFieldsTest {
    @Test
    void perf_script_shows_the_exact_values() throws Exception {
        Kernel.require();
        Path data = Files.createTempFile("usertrace-java-perf", ".data");
        try (Provider p = new Provider("jtest")) {
            Tracepoint tp = p.tracepoint("perf", Field.u32("seq"), Field.i64("neg"), Field.string("msg"));
            Process perf = new ProcessBuilder("perf", "record", "-q", "-e", "user_events:" + tp.name(), "-a",
                    "-o", data.toString())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(true).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!tp.isEnabled() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(tp.isEnabled(), "perf record did not attach within 60 s");
            // perf opens its events disabled and enables them after reading /proc:
            // emit for a while, so that some events land after that.
            for (int seq = 1; seq <= 60; seq++) {
                tp.emit(seq, -42L * seq, "perf héllo " + seq);
                Thread.sleep(100);
            }
            perf.destroy(); // SIGTERM: perf writes its file and exits
            assertTrue(perf.waitFor(120, TimeUnit.SECONDS), "perf record did not stop");
            Process script = new ProcessBuilder("perf", "script", "-i", data.toString())
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(script.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(script.waitFor(120, TimeUnit.SECONDS));
            List<String> lines = out.lines().filter(l -> l.contains(tp.name() + ":")).collect(Collectors.toList());
            assertTrue(lines.size() >= 5, "perf script saw " + lines.size() + " events:\n" + out);
            for (String line : lines) {
                String fields = line.substring(line.indexOf(tp.name() + ":") + tp.name().length() + 1).trim();
                Map<String, String> f = Fields.parse(fields, "msg");
                long seq = Long.parseLong(f.get("seq"));
                assertEquals(String.valueOf(-42L * seq), f.get("neg"), line);
                assertEquals("perf héllo " + seq, f.get("msg"), line);
            }
        } finally {
            new File(data.toString()).delete();
            new File(data + ".old").delete();
        }
    }
}

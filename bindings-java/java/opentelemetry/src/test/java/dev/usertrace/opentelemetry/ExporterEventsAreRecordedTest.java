package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.Status;
import dev.usertrace.Usertrace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exporter's events as {@code usertrace record} reads them: one
 * {@code <provider>_otel_span} per span, its readable fields the span's ids,
 * name, scope and CLOCK_MONOTONIC times, and a span too large for one event
 * cut into {@code _part} events first; before them, one
 * {@code <provider>_otel_resource} with the SDK's Resource exactly as its OTLP
 * marshaler encodes it. Through user_events in the guest; with
 * {@code -Dusertrace.shm=true} (run-tests.sh host) over shared memory.
 */
@Tag("kernel")
// Needs only `usertrace record`: also run natively over shared memory.
@Tag("recorder")
class ExporterEventsAreRecordedTest {
    @TempDir
    Path dir;

    @Test
    void each_span_is_one_event_with_its_ids_name_scope_and_monotonic_times() throws Exception {
        if (!Boolean.getBoolean("usertrace.shm")) {
            Status s = Usertrace.status();
            assertTrue(s.isAvailable(), "this test needs user_events (run it with run-tests.sh guest): " + s.message());
        }
        String provider = "jexp" + ProcessHandle.current().pid();
        Path out = dir.resolve("events.json");
        ProcessBuilder pb = new ProcessBuilder(Cli.path().toString(), "record", "--format", "json", "-e", provider + "_*",
                "-o", out.toString(), "--", Cli.java(), "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                "-cp", System.getProperty("java.class.path"), ExporterApp.class.getName())
                .redirectErrorStream(true);
        pb.environment().put("USERTRACE_OTEL_PROVIDER", provider);
        Process p = pb.start();
        String console = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), console);
        assertEquals(0, p.exitValue(), console);
        assertEquals("0", Recorded.printed(console, "dropped"), console);
        List<String> lines = Files.readString(out).lines().collect(Collectors.toList());
        List<String> heads = lines.stream().filter(l -> l.contains("\"event\":\"" + provider + "_otel_span\"")).toList();
        List<String> parts = lines.stream().filter(l -> l.contains("\"event\":\"" + provider + "_otel_span_part\"")).toList();
        assertEquals(2, heads.size(), lines + "\n" + console);
        // The resource before the first span's events. Once, where the two
        // exports come within a second of each other; again at the second
        // export where they do not (under emulation, a span in parts can
        // take longer), and then the same bytes.
        List<String> resources = lines.stream().filter(l -> l.contains("\"event\":\"" + provider + "_otel_resource\"")).toList();
        assertTrue(resources.size() == 1 || resources.size() == 2, lines + "\n" + console);
        String firstSpanEvent = lines.stream().filter(l -> l.contains("\"event\":\"" + provider + "_otel_span")).findFirst().orElseThrow();
        assertTrue(lines.indexOf(resources.get(0)) < lines.indexOf(firstSpanEvent), lines.toString());
        for (String resource : resources) {
            assertEquals("\"shop-java\"", field(resource, "service_name"), resource);
            assertEquals("\"" + Recorded.printed(console, "resource") + "\"", field(resource, "otlp_resource"), resource);
        }

        String trace = Recorded.printed(console, "trace");
        String hi = Long.toUnsignedString(Long.parseUnsignedLong(trace.substring(0, 16), 16));
        String lo = Long.toUnsignedString(Long.parseUnsignedLong(trace.substring(16), 16));
        String outer = Long.toUnsignedString(Long.parseUnsignedLong(Recorded.printed(console, "outer"), 16));
        String inner = Long.toUnsignedString(Long.parseUnsignedLong(Recorded.printed(console, "inner"), 16));
        long before = Long.parseLong(Recorded.printed(console, "before"));
        long after = Long.parseLong(Recorded.printed(console, "after"));
        // The inner span ends first, so its event comes first.
        String render = heads.get(0);
        String get = heads.get(1);
        assertEquals("\"render\"", field(render, "name"), render);
        assertEquals("\"GET /cart\"", field(get, "name"), get);
        for (String head : heads) {
            assertEquals(hi, field(head, "trace_id_hi"), head);
            assertEquals(lo, field(head, "trace_id_lo"), head);
            assertEquals("\"shop.web\"", field(head, "scope_name"), head);
            assertEquals("\"2.1\"", field(head, "scope_version"), head);
            long start = Long.parseUnsignedLong(field(head, "span_start_ns"));
            long duration = Long.parseUnsignedLong(field(head, "span_duration_ns"));
            // Unix times turned CLOCK_MONOTONIC: within the app's own readings,
            // but for the microseconds Instant.now() and the conversion may lose.
            assertTrue(start >= before - 1_000_000 && start + duration <= after + 1_000_000,
                    before + " <= " + start + " + " + duration + " <= " + after + ": " + head);
        }
        assertEquals(inner, field(render, "span_id"), render);
        assertEquals(outer, field(render, "parent_span_id"), render);
        assertEquals(outer, field(get, "span_id"), get);
        assertEquals("0", field(get, "parent_span_id"), get);
        assertEquals("1", field(get, "otlp_parts"), get);
        // OTLP's numbers, readable: the failed span 2 (ERROR), its child 0 (UNSET).
        assertEquals("2", field(get, "status_code"), get);
        assertEquals("0", field(render, "status_code"), render);
        int renderParts = Integer.parseInt(field(render, "otlp_parts"));
        assertTrue(renderParts >= 4, "20 000 bytes in parts of 6 KiB: " + render);
        assertEquals(renderParts - 1, parts.size(), parts.toString());
        for (String part : parts) {
            assertEquals(inner, field(part, "otlp_span_part"), part);
        }
    }

    private static String field(String line, String name) {
        int fields = line.indexOf("\"fields\":");
        assertTrue(fields >= 0, "no fields in " + line);
        Matcher m = Pattern.compile("\"" + name + "\":(\"(?:[^\"\\\\]|\\\\.)*\"|[^,}]*)").matcher(line.substring(fields));
        assertTrue(m.find(), name + " in " + line);
        return m.group(1);
    }
}

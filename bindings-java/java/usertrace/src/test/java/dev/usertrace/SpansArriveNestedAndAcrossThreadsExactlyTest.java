package dev.usertrace;

import static dev.usertrace.UsertraceRecordShowsTheExactValuesTest.cli;
import static dev.usertrace.UsertraceRecordShowsTheExactValuesTest.field;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * In the guest kernel: {@code usertrace record --format json} sees a Java
 * process's spans as the convention says, in order, with the exact typed
 * values: nested spans on one thread, and spans ended on another thread,
 * by the Span object and by its id.
 */
@Tag("kernel")
// Needs only `usertrace record`: also run natively over shared memory.
@Tag("recorder")
class SpansArriveNestedAndAcrossThreadsExactlyTest {
    static final long BIG = 0x8000_0000_0000_0001L; // 2^63 + 1 as a u64
    static final String TEXT = "héllo wörld €𝄞";

    /** The recorded process; prints the span ids it saw, then "spans: done". */
    public static final class Emitter {
        public static void main(String[] args) throws Exception {
            try (Provider p = new Provider("jspan")) {
                SpanTracepoint outer = p.span("outer", Field.u64("big"), Field.i32("neg"), Field.string("text"),
                        Field.f64("x"));
                SpanTracepoint inner = p.span("inner", Field.i16("n"), Field.string("tag"));
                SpanTracepoint handed = p.span("handed", Field.u32("n"));
                // The provider's own span_end event, registered again: the same event, so its
                // word says when the recorder listens to the ends too.
                Tracepoint ends = p.tracepoint(Span.END_EVENT, Field.u64(Span.END_FIELD));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!(outer.isEnabled() && inner.isEnabled() && handed.isEnabled() && ends.isEnabled())
                        && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                if (!ends.isEnabled() || !handed.isEnabled()) {
                    System.out.println("spans: usertrace record did not attach within 60 s");
                    System.exit(3);
                }
                List<Long> ids = new ArrayList<>();
                try (Span a = outer.begin(BIG, -7, TEXT, -2.5)) {
                    ids.add(a.id());
                    try (Span b = inner.event().put(-300).put("ünïcode").begin()) {
                        ids.add(b.id());
                    }
                }
                // Ended on another thread: the Span itself (closed twice: one end event), then by its id.
                Span c = handed.begin(42);
                ids.add(c.id());
                Thread t = new Thread(() -> {
                    c.close();
                    c.close();
                }, "span-closer");
                t.start();
                t.join();
                Span d = handed.begin(43);
                ids.add(d.id());
                long id = d.id();
                t = new Thread(() -> handed.end(id), "span-ender");
                t.start();
                t.join();
                System.out.println("spans: ids " + ids.stream().map(Long::toUnsignedString).collect(Collectors.joining(" ")));
            }
            System.out.println("spans: done");
        }
    }

    @Test
    void nested_and_handed_over_spans_arrive_exactly() throws Exception {
        Kernel.requireRecorder();
        Path out = Files.createTempFile("usertrace-java-spans", ".json");
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process rec = new ProcessBuilder(cli().toString(), "record", "--format", "json", "-e", "jspan_*",
                    "-o", out.toString(), "--", java, "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                    "-cp", System.getProperty("java.class.path"), Emitter.class.getName())
                    .redirectErrorStream(true).start();
            String console = new String(rec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(rec.waitFor(300, TimeUnit.SECONDS), "usertrace record did not finish: " + console);
            assertEquals(0, rec.exitValue(), console);
            assertTrue(console.contains("spans: done"), console);
            String idLine = console.lines().filter(l -> l.startsWith("spans: ids ")).findFirst().orElseThrow();
            String[] ids = idLine.substring("spans: ids ".length()).split(" ");
            assertEquals(4, ids.length, idLine);
            assertEquals(4, new HashSet<>(List.of(ids)).size(), "span ids repeat: " + idLine);
            for (String id : ids) {
                assertNotEquals("0", id, idLine);
            }
            String a = ids[0], b = ids[1], c = ids[2], d = ids[3];

            String json = Files.readString(out);
            List<String> lines = json.lines().filter(l -> l.contains("\"event\":\"jspan_")).collect(Collectors.toList());
            String all = String.join("\n", lines) + "\n" + console;
            List<String> events = lines.stream().map(l -> field(l, "event")).collect(Collectors.toList());
            assertEquals(List.of("\"jspan_outer\"", "\"jspan_inner\"", "\"jspan_span_end\"", "\"jspan_span_end\"",
                    "\"jspan_handed\"", "\"jspan_span_end\"", "\"jspan_handed\"", "\"jspan_span_end\""), events, all);
            for (String l : lines) {
                assertEquals("\"java\"", field(l, "process"), l);
                assertEquals(field(lines.get(0), "pid"), field(l, "pid"), l);
            }
            String outer = lines.get(0);
            assertEquals(a, field(outer, "span_begin"), all);
            assertEquals(Long.toUnsignedString(BIG), field(outer, "big"), all);
            assertEquals("-7", field(outer, "neg"), all);
            assertEquals("\"" + TEXT + "\"", field(outer, "text"), all);
            assertEquals(-2.5, Double.parseDouble(field(outer, "x")), all);
            String inner = lines.get(1);
            assertEquals(b, field(inner, "span_begin"), all);
            assertEquals("-300", field(inner, "n"), all);
            assertEquals("\"ünïcode\"", field(inner, "tag"), all);
            // Nested: the inner span ends first, then the outer, on the thread that began both.
            assertEquals(b, field(lines.get(2), "span_end"), all);
            assertEquals(a, field(lines.get(3), "span_end"), all);
            for (int i = 1; i < 5; i++) {
                assertEquals(field(outer, "tid"), field(lines.get(i), "tid"), all);
            }
            // Handed over: begun on the main thread, ended on another, the id linking them.
            assertEquals(c, field(lines.get(4), "span_begin"), all);
            assertEquals("42", field(lines.get(4), "n"), all);
            assertEquals(c, field(lines.get(5), "span_end"), all);
            assertEquals("\"span-closer\"", field(lines.get(5), "comm"), all);
            assertEquals(d, field(lines.get(6), "span_begin"), all);
            assertEquals("43", field(lines.get(6), "n"), all);
            assertEquals(d, field(lines.get(7), "span_end"), all);
            assertEquals("\"span-ender\"", field(lines.get(7), "comm"), all);
            assertEquals(field(outer, "tid"), field(lines.get(6), "tid"), all);
            assertNotEquals(field(outer, "tid"), field(lines.get(5), "tid"), all);
            assertNotEquals(field(outer, "tid"), field(lines.get(7), "tid"), all);
        } finally {
            Files.deleteIfExists(out);
        }
    }
}

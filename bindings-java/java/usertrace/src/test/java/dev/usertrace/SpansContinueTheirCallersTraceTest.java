package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A handler under an incoming {@code traceparent}, recorded by
 * {@code usertrace record}: its spans are in the caller's trace, parent by
 * parent, and the header it injects for its outgoing call names its
 * innermost span.
 */
@Tag("kernel")
// Needs only `usertrace record`: also run natively over shared memory.
@Tag("recorder")
class SpansContinueTheirCallersTraceTest {
    static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /** Waits for the recorder, then handles one request; prints the ids and the header it injected. */
    public static final class Handler {
        public static void main(String[] args) throws Exception {
            try (Provider p = new Provider("jctx")) {
                SpanTracepoint handle = p.span("handle", Field.u32("n"));
                SpanTracepoint query = p.span("query", Field.u32("n"));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!(handle.isEnabled() && query.isEnabled()) && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                TraceContext incoming = TraceContext.extract(Map.of("traceparent", TRACEPARENT, "tracestate", "vendor=x"));
                Map<String, String> headers = new HashMap<>();
                try (Scope s = incoming.makeCurrent(); Span h = handle.begin(1); Scope hs = h.makeCurrent();
                        Span q = query.begin(2); Scope qs = q.makeCurrent()) {
                    TraceContext.current().inject(headers);
                    System.out.println("ids " + Long.toUnsignedString(h.id()) + " " + Long.toUnsignedString(q.id()));
                }
                System.out.println("traceparent " + headers.get("traceparent"));
                System.out.println("tracestate " + headers.get("tracestate"));
                System.out.println("after " + TraceContext.current());
            }
        }
    }

    @Test
    void spans_continue_the_callers_trace_and_hand_their_own_on() throws Exception {
        Kernel.requireRecorder();
        Path cli = UsertraceRecordShowsTheExactValuesTest.cli();
        Path out = Files.createTempFile("usertrace-java-context", ".json");
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process rec = new ProcessBuilder(cli.toString(), "record", "--format", "json", "-e", "jctx_*",
                    "-o", out.toString(), "--", java, "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                    "-cp", System.getProperty("java.class.path"), Handler.class.getName())
                    .redirectErrorStream(true).start();
            String console = new String(rec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(rec.waitFor(300, TimeUnit.SECONDS), "usertrace record did not finish: " + console);
            assertEquals(0, rec.exitValue(), console);
            Map<String, String> said = console.lines().filter(l -> l.contains(" ")).collect(Collectors.toMap(
                    l -> l.substring(0, l.indexOf(' ')), l -> l.substring(l.indexOf(' ') + 1), (a, b) -> b));
            String[] ids = said.get("ids").split(" ");
            long handleId = Long.parseUnsignedLong(ids[0]);
            long queryId = Long.parseUnsignedLong(ids[1]);
            List<String> begins = Files.readString(out).lines().filter(l -> l.contains("\"span_begin\""))
                    .collect(Collectors.toList());
            assertEquals(2, begins.size(), begins + "\n" + console);
            String hi = Long.toUnsignedString(0x4bf92f3577b34da6L);
            String lo = Long.toUnsignedString(0xa3ce929d0e0e4736L);
            assertEquals(List.of(ids[0], hi, lo, Long.toUnsignedString(0x00f067aa0ba902b7L)), traceFields(begins.get(0)));
            assertEquals(List.of(ids[1], hi, lo, ids[0]), traceFields(begins.get(1)));
            assertTrue(begins.get(0).contains("\"event\":\"jctx_handle\""), begins.get(0));
            assertEquals("00-4bf92f3577b34da6a3ce929d0e0e4736-" + String.format("%016x", queryId) + "-01", said.get("traceparent"));
            assertEquals("vendor=x", said.get("tracestate"));
            assertEquals("null", said.get("after"));
            assertTrue(handleId != queryId);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static List<String> traceFields(String line) {
        return List.of("span_begin", "trace_id_hi", "trace_id_lo", "parent_span_id").stream()
                .map(f -> UsertraceRecordShowsTheExactValuesTest.field(line, f)).collect(Collectors.toList());
    }
}

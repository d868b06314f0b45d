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

    /**
     * The documented handler for a request that brought no {@code traceparent}:
     * {@code beginIn} under no parent begins a new trace, which the header it
     * injects names.
     */
    public static final class RootHandler {
        public static void main(String[] args) throws Exception {
            try (Provider p = new Provider("jroot")) {
                SpanTracepoint handle = p.span("handle", Field.u32("n"));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!handle.isEnabled() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                TraceContext incoming = TraceContext.extract(Map.of());
                Map<String, String> headers = new HashMap<>();
                try (Span h = handle.beginIn(incoming, 1); Scope hs = h.makeCurrent()) {
                    TraceContext.injectCurrent(headers::put);
                    System.out.println("ids " + Long.toUnsignedString(h.id()));
                }
                System.out.println("traceparent " + headers.get("traceparent"));
            }
        }
    }

    @Test
    void spans_continue_the_callers_trace_and_hand_their_own_on() throws Exception {
        Path out = Files.createTempFile("usertrace-java-context", ".json");
        try {
            Map<String, String> said = record(Handler.class, "jctx_*", out);
            String console = said.toString();
            String[] ids = said.get("ids").split(" ");
            long handleId = Long.parseUnsignedLong(ids[0]);
            long queryId = Long.parseUnsignedLong(ids[1]);
            List<String> begins = begins(out);
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

    @Test
    void a_request_with_no_traceparent_begins_a_new_trace_that_its_header_names() throws Exception {
        Path out = Files.createTempFile("usertrace-java-root", ".json");
        try {
            Map<String, String> said = record(RootHandler.class, "jroot_*", out);
            long handleId = Long.parseUnsignedLong(said.get("ids"));
            List<String> begins = begins(out);
            assertEquals(1, begins.size(), begins + "\n" + said);
            List<String> fields = traceFields(begins.get(0));
            assertEquals(List.of(said.get("ids"), "0"), List.of(fields.get(0), fields.get(3)), "a root: " + begins);
            String traceId = String.format("%016x%016x", Long.parseUnsignedLong(fields.get(1)), Long.parseUnsignedLong(fields.get(2)));
            assertTrue(!traceId.equals("0".repeat(32)), "a trace id of its own: " + begins);
            assertEquals("00-" + traceId + "-" + String.format("%016x", handleId) + "-01", said.get("traceparent"));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** Runs {@code handler} under {@code usertrace record -e pattern -o out}; what it printed, by first word. */
    private static Map<String, String> record(Class<?> handler, String pattern, Path out) throws Exception {
        Kernel.requireRecorder();
        Path cli = UsertraceRecordShowsTheExactValuesTest.cli();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process rec = new ProcessBuilder(cli.toString(), "record", "--format", "json", "-e", pattern,
                "-o", out.toString(), "--", java, "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                "-cp", System.getProperty("java.class.path"), handler.getName())
                .redirectErrorStream(true).start();
        String console = new String(rec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(rec.waitFor(300, TimeUnit.SECONDS), "usertrace record did not finish: " + console);
        assertEquals(0, rec.exitValue(), console);
        return console.lines().filter(l -> l.contains(" ")).collect(Collectors.toMap(
                l -> l.substring(0, l.indexOf(' ')), l -> l.substring(l.indexOf(' ') + 1), (a, b) -> b));
    }

    private static List<String> begins(Path out) throws Exception {
        return Files.readString(out).lines().filter(l -> l.contains("\"span_begin\"")).collect(Collectors.toList());
    }

    private static List<String> traceFields(String line) {
        return List.of("span_begin", "trace_id_hi", "trace_id_lo", "parent_span_id").stream()
                .map(f -> UsertraceRecordShowsTheExactValuesTest.field(line, f)).collect(Collectors.toList());
    }
}

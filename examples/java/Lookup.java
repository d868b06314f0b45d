import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Span;
import dev.usertrace.SpanTracepoint;
import dev.usertrace.TraceContext;
import dev.usertrace.Tracepoint;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Java stage of the four-language demo (harness/demo), the last one.
 *
 * Says {@code ready} on stdout once set up, then reads requests
 * ({@code ID TRACEPARENT PATH} lines) on stdin, looks each up inside a span
 * {@code demo_java_lookup} begun under the caller's traceparent, and answers {@code ID RESULT} on stdout.
 * Run it with the agent, so the JVM's own GC pauses join the timeline as
 * spans too (harness/demo gives it {@code startwait}, so that JFR records
 * from main's first line). See examples/rust/src/bin/demo-front.rs for the
 * whole chain.
 */
public final class Lookup {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        Map<String, Integer> hits = new HashMap<>();
        List<byte[]> garbage = new ArrayList<>();
        try (Provider demo = new Provider("demo_java")) {
            SpanTracepoint lookup = demo.span("lookup", Field.u64("request_id"), Field.string("path"));
            Tracepoint found = demo.tracepoint("found", Field.u64("request_id"), Field.i32("hits"), Field.f64("score"));
            out.println("ready");
            String line;
            while ((line = in.readLine()) != null) {
                String[] request = line.split(" ", 3);
                long id = Long.parseUnsignedLong(request[0]);
                TraceContext caller = TraceContext.fromTraceparent(request[1]); // null for "-"
                String path = request[2];
                String result;
                try (Span s = lookup.beginIn(caller, id, path)) {
                    int n = hits.merge(path, 1, Integer::sum);
                    // Enough allocation that the collector runs now and then:
                    // its pauses show up beside the requests.
                    for (int i = 0; i < 200; i++) {
                        garbage.add(new byte[16 * 1024]);
                    }
                    if (garbage.size() > 600) {
                        garbage.clear();
                        System.gc();
                    }
                    if (found.isEnabled()) {
                        found.emit(id, n, n / (double) (n + 1));
                    }
                    result = path.startsWith("/api") ? "error:unavailable" : "ok:" + n;
                }
                out.println(id + " " + result);
            }
            // The agent forwards the GC pauses JFR reports, and JFR hands
            // them over about once a second (much later under emulation):
            // linger a moment, or the last pauses would leave with the JVM.
            try {
                Thread.sleep(3_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Span;
import dev.usertrace.SpanTracepoint;
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
import java.util.concurrent.TimeUnit;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.RecordingState;

/**
 * The Java stage of the four-language demo (harness/demo), the last one.
 *
 * Says {@code ready} on stdout once set up, then reads requests
 * ({@code ID PATH} lines) on stdin, looks each up inside a span
 * {@code demo_java_lookup}, and answers {@code ID RESULT} on stdout.
 * Run it with the agent, so the JVM's own GC pauses join the timeline as
 * spans too. See examples/rust/src/bin/demo-front.rs for the whole chain.
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
            if (lookup.isEnabled()) {
                awaitFlightRecording();
            }
            out.println("ready");
            String line;
            while ((line = in.readLine()) != null) {
                int space = line.indexOf(' ');
                long id = Long.parseUnsignedLong(line.substring(0, space));
                String path = line.substring(space + 1);
                String result;
                try (Span s = lookup.begin(id, path)) {
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

    /**
     * Waits until the agent's JFR recording runs, for at most the seconds in
     * {@code USERTRACE_DEMO_JFR_WAIT} (harness/demo sets it; unset, no
     * wait). The agent starts JFR from a thread of its own, so that no
     * application waits for it. On hardware that takes well under a second;
     * under emulation it took 10 to 40 s, and the demo's requests, with
     * their collections, were over by then. A service would not wait; the
     * demo does, so that its GC pauses are in the timeline. Only the demo
     * asks: a recording of {@code demo_*} alone enables none of the agent's
     * tracepoints, and its JFR never starts.
     */
    private static void awaitFlightRecording() {
        String wait = System.getenv("USERTRACE_DEMO_JFR_WAIT");
        if (wait == null || wait.isEmpty()) {
            return;
        }
        long seconds;
        try {
            seconds = Long.parseLong(wait);
        } catch (NumberFormatException e) {
            System.err.println("Lookup: USERTRACE_DEMO_JFR_WAIT is " + wait + ", not a number of seconds; not waiting");
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!flightRecordingRuns()) {
            if (System.nanoTime() > deadline) {
                System.err.println("Lookup: no JFR recording ran within " + seconds
                        + " s (is the agent loaded?); going on without GC pauses");
                return;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean flightRecordingRuns() {
        if (!FlightRecorder.isInitialized()) {
            return false;
        }
        for (Recording r : FlightRecorder.getFlightRecorder().getRecordings()) {
            if (r.getState() == RecordingState.RUNNING) {
                return true;
            }
        }
        return false;
    }
}

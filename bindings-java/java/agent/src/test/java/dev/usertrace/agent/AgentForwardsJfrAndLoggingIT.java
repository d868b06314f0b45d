package dev.usertrace.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.LogConvention;
import dev.usertrace.Provider;
import dev.usertrace.Usertrace;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * In the guest kernel, end to end: a sample app under {@code -javaagent}
 * triggers GC, logs and throws; ftrace shows the events. The test registers
 * the same definitions first (same name and fields share one event), so
 * ftrace can be enabled before the app starts.
 */
@Tag("kernel")
class AgentForwardsJfrAndLoggingIT {
    static final Path TRACEFS = Path.of("/sys/kernel/tracing");

    static void enable(String event, boolean on) throws Exception {
        Files.writeString(TRACEFS.resolve("events/user_events/" + event + "/enable"), on ? "1" : "0");
    }

    static List<String> lines(String event) throws Exception {
        String text = new String(Files.readAllBytes(TRACEFS.resolve("trace")), StandardCharsets.UTF_8);
        String marker = " " + event + ": ";
        return text.lines().filter(l -> l.contains(marker)).map(l -> l.substring(l.indexOf(marker) + marker.length()))
                .collect(Collectors.toList());
    }

    static long field(String line, String name) {
        Matcher m = Pattern.compile("\\b" + name + "=(?:0x[0-9a-f]+ \\()?(-?\\d+)").matcher(line);
        assertTrue(m.find(), name + " in " + line);
        return Long.parseLong(m.group(1));
    }

    @Test
    void gc_pauses_logs_and_exceptions_arrive() throws Exception {
        assertTrue(Usertrace.status().isAvailable(), Usertrace.status().message());
        String[] events = {"jvm_gc", "jvm_gc_pause", "jvm_exception", "jvm_log"};
        try (Provider jvm = new Provider("jvm")) {
            jvm.completedSpan(Events.GC, Events.GC_FIELDS);
            jvm.completedSpan(Events.GC_PAUSE, Events.GC_PAUSE_FIELDS);
            jvm.tracepoint(Events.EXCEPTION, Events.EXCEPTION_FIELDS);
            jvm.tracepoint(LogConvention.NAME, LogConvention.fields());
            Files.writeString(TRACEFS.resolve("trace"), "");
            for (String e : events) {
                enable(e, true);
            }
            long before = System.currentTimeMillis() * 1_000_000L;
            long monoBefore = System.nanoTime();
            String out;
            try {
                out = AgentRun.run("verbose=true,poll=50", "6", "700", "wait-for-jfr");
            } finally {
                for (String e : events) {
                    enable(e, false);
                }
            }
            long after = System.currentTimeMillis() * 1_000_000L;
            long monoAfter = System.nanoTime();

            List<String> logs = lines("jvm_log");
            String logText = logs.toString() + "\n" + out;
            for (int round = 1; round <= 6; round++) {
                String msg = "message=sample: round " + round + " ";
                assertTrue(logs.stream().anyMatch(l -> l.contains(msg) && l.contains("logger=sample ")), msg + " in " + logText);
            }
            String info = logs.stream().filter(l -> l.contains("message=sample: round 1 ")).findFirst().orElseThrow();
            assertEquals(800, field(info, "level"), info);
            long t = field(info, "time_ns");
            assertTrue(t >= before && t <= after, "time_ns " + t + " within the run " + before + ".." + after);

            // JFR starts at premain (the events are already enabled); it delivers about once a second.
            List<String> gcs = lines("jvm_gc");
            assertFalse(gcs.isEmpty(), "no jvm_gc event: " + out);
            String gc = gcs.stream().filter(l -> l.contains("cause=System.gc()")).findFirst()
                    .orElseThrow(() -> new AssertionError("no System.gc() collection in " + gcs + "\n" + out));
            // Completed spans: the start on CLOCK_MONOTONIC, System.nanoTime()'s clock in every JVM here.
            long start = field(gc, "span_start_ns");
            assertTrue(start >= monoBefore && start <= monoAfter,
                    "span_start_ns " + start + " within the run " + monoBefore + ".." + monoAfter);
            assertTrue(field(gc, "span_duration_ns") > 0, gc);
            assertTrue(gc.contains("gc_name="), gc);
            List<String> pauses = lines("jvm_gc_pause");
            assertTrue(pauses.stream().anyMatch(l -> l.contains("cause=System.gc()") && field(l, "span_duration_ns") > 0
                    && field(l, "span_start_ns") >= monoBefore && field(l, "span_start_ns") <= monoAfter),
                    "no jvm_gc_pause of a System.gc() within the run: " + pauses + "\n" + out);

            List<String> exceptions = lines("jvm_exception");
            assertTrue(exceptions.stream().anyMatch(l -> l.contains("class=java.lang.IllegalStateException")
                    && l.contains("message=sample failure")), "no sample exception in " + exceptions + "\n" + out);
        }
    }
}

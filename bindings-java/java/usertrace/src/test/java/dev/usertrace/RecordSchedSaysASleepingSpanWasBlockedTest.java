package dev.usertrace;

import static dev.usertrace.UsertraceRecordShowsTheExactValuesTest.cli;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * In the guest kernel, the check for Java: a span around
 * {@code Thread.sleep(300)}, recorded by {@code usertrace record --sched},
 * is one that {@code usertrace report --format json} calls blocked for
 * nearly all of its 300 ms and on a CPU for little of it.
 */
@Tag("kernel")
class RecordSchedSaysASleepingSpanWasBlockedTest {
    /** The recorded process; prints "took NS", the span's length as it timed it. */
    public static final class Sleeper {
        public static void main(String[] args) throws Exception {
            try (Provider p = new Provider("jsched")) {
                SpanTracepoint nap = p.span("nap");
                SpanTracepoint warmup = p.span("warmup");
                Tracepoint ends = p.tracepoint(Span.END_EVENT, Field.u64(Span.END_FIELD));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!(nap.isEnabled() && warmup.isEnabled() && ends.isEnabled()) && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                // Once through the same path first, so that class loading and
                // the interpreter's first calls (long under emulation) fall
                // in this span, not in the one measured.
                for (int i = 0; i < 2; i++) {
                    try (Span s = warmup.begin()) {
                        Thread.sleep(1);
                    }
                }
                long start = System.nanoTime();
                try (Span s = nap.begin()) {
                    Thread.sleep(300);
                }
                System.out.println("took " + (System.nanoTime() - start));
            }
        }
    }

    /** The {@code total_ns} of {@code what} in span {@code span}'s object of a report. */
    static long total(String report, String span, String what) {
        int at = report.indexOf("\"name\":\"" + span + "\"");
        assertTrue(at >= 0, "no span " + span + " in " + report);
        Matcher m = Pattern.compile("\"" + what + "\":\\{[^}]*\"total_ns\":(\\d+)").matcher(report);
        assertTrue(m.find(at), "no " + what + " for " + span + " in " + report);
        return Long.parseLong(m.group(1));
    }

    @Test
    void a_span_around_thread_sleep_is_blocked_for_nearly_all_of_it() throws Exception {
        Kernel.require();
        Path out = Files.createTempFile("usertrace-java-sched", ".jsonl");
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process rec = new ProcessBuilder(cli().toString(), "record", "--sched", "-e", "jsched_*", "-o", out.toString(),
                    "--", java, "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                    "-cp", System.getProperty("java.class.path"), Sleeper.class.getName())
                    .redirectErrorStream(true).start();
            String console = new String(rec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(rec.waitFor(300, TimeUnit.SECONDS), "usertrace record did not finish: " + console);
            assertEquals(0, rec.exitValue(), console);
            long took = console.lines().filter(l -> l.startsWith("took ")).mapToLong(l -> Long.parseLong(l.substring(5).trim()))
                    .findFirst().orElseThrow(() -> new AssertionError(console));
            Process report = new ProcessBuilder(cli().toString(), "report", "--format", "json", out.toString())
                    .redirectErrorStream(true).start();
            String json = new String(report.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(report.waitFor(120, TimeUnit.SECONDS), json);
            assertEquals(0, report.exitValue(), json);
            long blocked = total(json, "jsched_nap", "blocked");
            long onCpu = total(json, "jsched_nap", "on_cpu");
            long runnable = total(json, "jsched_nap", "runnable");
            assertTrue(took >= 300_000_000L, "took " + took);
            assertTrue(blocked >= 280_000_000L, "blocked " + blocked + ": " + json);
            assertTrue(onCpu < 30_000_000L, "on-CPU " + onCpu + ": " + json);
            assertTrue(onCpu + runnable + blocked <= took, json);
        } finally {
            Files.deleteIfExists(out);
        }
    }
}

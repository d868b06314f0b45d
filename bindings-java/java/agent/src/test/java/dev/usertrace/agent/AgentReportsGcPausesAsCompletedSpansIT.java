package dev.usertrace.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * In the guest kernel: {@code usertrace record -- java -javaagent:... GcApp}.
 * A GC pause the agent reports as {@code jvm_gc_pause} lies, by its
 * {@code span_start_ns} and {@code span_duration_ns}, between the app's
 * marks before and after its System.gc(), as the kernel timed those
 * (CLOCK_MONOTONIC, as the recording's {@code time_ns}).
 */
@Tag("kernel")
class AgentReportsGcPausesAsCompletedSpansIT {
    static final int ROUNDS = 4;

    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(\"(?:[^\"\\\\]|\\\\.)*\"|[^,}]*)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return m.group(1);
    }

    static long number(String json, String name) {
        return Long.parseUnsignedLong(field(json, name));
    }

    @Test
    void a_gc_pause_span_lies_between_the_marks_around_system_gc() throws Exception {
        // GcApp waits for the agent's JFR stream itself, then runs its rounds.
        assertPausesBetweenMarks(ROUNDS, "gc=false,exceptions=false,jul=false,poll=50,verbose=true");
    }

    @Test
    void with_startwait_a_collection_on_mains_first_line_is_reported() throws Exception {
        // GcApp collects before it waits for anything: only the agent's
        // startwait, holding main until JFR delivers, gets that pause recorded
        // (under emulation JFR starts seconds after the JVM).
        assertPausesBetweenMarks(1, "gc=false,exceptions=false,jul=false,poll=50,verbose=true,startwait=120", "at-start");
    }

    /**
     * Records {@code GcApp rounds appArgs...} under the agent with
     * {@code options}: the marks arrive exactly, in order, from the app's
     * process, and at least one {@code jvm_gc_pause} of a System.gc() lies
     * between a round's marks.
     */
    static void assertPausesBetweenMarks(int rounds, String options, String... appArgs) throws Exception {
        String cli = System.getProperty("usertrace.cli");
        assertTrue(cli != null && Files.isExecutable(Path.of(cli)), "set -Dusertrace.cli; got " + cli);
        Path out = Files.createTempFile("usertrace-agent-gc", ".json");
        try {
            List<String> cmd = new ArrayList<>(List.of(cli, "record", "--format", "json", "-e", "jvm_gc_pause,gcapp_*",
                    "-o", out.toString(), "--", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-javaagent:" + AgentRun.agentJar() + "=" + options,
                    "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"), "-cp", System.getProperty("java.class.path"),
                    GcApp.class.getName(), String.valueOf(rounds)));
            cmd.addAll(List.of(appArgs));
            Process rec = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String console = new String(rec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(rec.waitFor(300, TimeUnit.SECONDS), "usertrace record did not finish: " + console);
            assertEquals(0, rec.exitValue(), console);
            assertTrue(console.contains("gcapp: done"), console);

            List<String> lines = Files.readString(out).lines().collect(Collectors.toList());
            List<String> marks = lines.stream().filter(l -> l.contains("\"event\":\"gcapp_mark\"")).collect(Collectors.toList());
            List<String> pauses = lines.stream().filter(l -> l.contains("\"event\":\"jvm_gc_pause\"")).collect(Collectors.toList());
            String all = String.join("\n", marks) + "\n" + String.join("\n", pauses) + "\n" + console;

            // The marks, exactly and in order, from the app's process.
            List<String> seen = new ArrayList<>();
            List<String> expected = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                expected.add(round + " \"before\"");
                expected.add(round + " \"after\"");
            }
            for (String m : marks) {
                seen.add(field(m, "round") + " " + field(m, "phase"));
            }
            assertEquals(expected, seen, all);
            String pid = field(marks.get(0), "pid");
            for (String l : marks) {
                assertEquals("\"java\"", field(l, "process"), l);
                assertEquals(pid, field(l, "pid"), l);
            }

            assertFalse(pauses.isEmpty(), "no jvm_gc_pause: " + all);
            int inside = 0;
            for (String p : pauses) {
                assertEquals("\"java\"", field(p, "process"), p);
                assertEquals(pid, field(p, "pid"), p);
                long start = number(p, "span_start_ns");
                long duration = number(p, "span_duration_ns");
                // Reported after the fact: the record is written after the pause ended.
                assertTrue(start + duration <= number(p, "time_ns"), "a pause reported before it ended: " + p);
                for (int round = 0; round < rounds; round++) {
                    long before = number(marks.get(2 * round), "time_ns");
                    long after = number(marks.get(2 * round + 1), "time_ns");
                    if (start >= before && start <= after) {
                        assertTrue(duration > 0 && start + duration <= after, "pause " + p + " within round " + (round + 1)
                                + " (" + before + ".." + after + "): " + all);
                        assertEquals("\"System.gc()\"", field(p, "cause"), p);
                        assertFalse(field(p, "gc_name").equals("\"\""), p);
                        inside++;
                    }
                }
            }
            assertTrue(inside >= 1, "no jvm_gc_pause starts between a round's marks: " + all);
        } finally {
            Files.deleteIfExists(out);
        }
    }
}

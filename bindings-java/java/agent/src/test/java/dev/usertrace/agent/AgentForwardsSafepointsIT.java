package dev.usertrace.agent;

import static dev.usertrace.agent.AgentForwardsJfrAndLoggingIT.TRACEFS;
import static dev.usertrace.agent.AgentForwardsJfrAndLoggingIT.enable;
import static dev.usertrace.agent.AgentForwardsJfrAndLoggingIT.field;
import static dev.usertrace.agent.AgentForwardsJfrAndLoggingIT.lines;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.Provider;
import dev.usertrace.Usertrace;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * In the guest kernel: with {@code safepoints=true} (off by default) the
 * agent reports each safepoint, from jdk.SafepointBegin's start to
 * jdk.SafepointEnd's end, as the completed span {@code jvm_safepoint}. The
 * sample app's System.gc() calls are VM operations, each run at a safepoint.
 */
@Tag("kernel")
class AgentForwardsSafepointsIT {
    @Test
    void safepoints_arrive_when_asked_for() throws Exception {
        assertTrue(Usertrace.status().isAvailable(), Usertrace.status().message());
        try (Provider jvm = new Provider("jvm")) {
            jvm.completedSpan(Events.SAFEPOINT, Events.SAFEPOINT_FIELDS);
            Files.writeString(TRACEFS.resolve("trace"), "");
            enable("jvm_safepoint", true);
            long before = System.nanoTime();
            String out;
            try {
                out = AgentRun.run("safepoints=true,verbose=true,poll=50", "6", "700", "wait-for-jfr");
            } finally {
                enable("jvm_safepoint", false);
            }
            long after = System.nanoTime();
            assertTrue(out.contains("jvm_safepoint"), "the agent registered no jvm_safepoint: " + out);

            List<String> safepoints = lines("jvm_safepoint");
            assertFalse(safepoints.isEmpty(), "no jvm_safepoint event: " + out);
            String all = safepoints + "\n" + out;
            for (String sp : safepoints) {
                long start = field(sp, "span_start_ns");
                assertTrue(start >= before && start <= after,
                        "span_start_ns " + start + " within the run " + before + ".." + after + " (CLOCK_MONOTONIC): " + all);
                assertTrue(field(sp, "safepoint_id") > 0, sp);
                // At least the VM thread's requester and the main thread; a 32-bit count.
                long threads = field(sp, "total_threads");
                assertTrue(threads > 0 && threads < 100_000, sp);
                long jni = field(sp, "jni_critical_threads");
                assertTrue(jni >= 0 && jni <= threads, sp);
                // From the begin's start to the end's end: the whole safepoint, never empty.
                long duration = field(sp, "span_duration_ns");
                assertTrue(duration > 0 && start + duration <= after, sp);
            }
            // Each System.gc() is its own safepoint: six rounds, several distinct ids.
            long ids = safepoints.stream().mapToLong(l -> field(l, "safepoint_id")).distinct().count();
            assertTrue(ids >= 2, "distinct safepoint ids: " + ids + " in " + all);
        }
    }
}

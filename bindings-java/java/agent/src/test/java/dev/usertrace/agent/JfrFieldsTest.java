package dev.usertrace.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/** The field extraction the agent forwards with, on real JFR events (anywhere: no user_events needed). */
class JfrFieldsTest {
    @Test
    void gc_fields_are_read_with_their_types() throws Exception {
        Path file = Files.createTempFile("usertrace-jfr-fields", ".jfr");
        try (Recording r = new Recording()) {
            r.enable("jdk.GarbageCollection").withoutThreshold();
            r.enable("jdk.GCPhasePause").withoutThreshold();
            r.start();
            System.gc();
            r.stop();
            r.dump(file);
            List<RecordedEvent> events = RecordingFile.readAllEvents(file);
            List<RecordedEvent> gcs = events.stream().filter(e -> e.getEventType().getName().equals("jdk.GarbageCollection"))
                    .collect(Collectors.toList());
            assertFalse(gcs.isEmpty(), "no jdk.GarbageCollection in " + events);
            RecordedEvent gc = gcs.stream().filter(e -> JfrBridge.string(e, "cause").equals("System.gc()")).findFirst()
                    .orElseThrow(() -> new AssertionError("no System.gc() collection in " + gcs));
            long sum = JfrBridge.nanos(gc, "sumOfPauses");
            long longest = JfrBridge.nanos(gc, "longestPause");
            assertTrue(longest > 0 && longest <= sum, longest + " <= " + sum);
            assertEquals(gc.getDuration("sumOfPauses").toNanos(), sum);
            assertTrue(JfrBridge.startNs(gc) > 0 && JfrBridge.durationNs(gc) > 0, gc.toString());
            assertFalse(JfrBridge.string(gc, "name").isEmpty(), gc.toString());
            assertEquals(gc.getLong("gcId"), JfrBridge.u32(gc, "gcId"));
            assertEquals(0, JfrBridge.nanos(gc, "noSuchField"));
            assertEquals("", JfrBridge.string(gc, "noSuchField"));
        } finally {
            Files.deleteIfExists(file);
        }
    }
}

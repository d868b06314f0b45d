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

/**
 * With a clock sample from the same recording, a JFR event's start maps to
 * the System.nanoTime() (CLOCK_MONOTONIC) at which it happened: a GC pause
 * of System.gc() starts between nanoTime read before and after the call
 * (anywhere: no user_events needed).
 */
class MonotonicClockMapsJfrTimesToNanoTimeTest {
    @Test
    void a_gc_pause_starts_between_the_nano_times_around_system_gc() throws Exception {
        Path file = Files.createTempFile("usertrace-jfr-clock", ".jfr");
        long before;
        long after;
        try (Recording r = new Recording()) {
            r.enable(MonotonicClock.ClockSample.class).withoutThreshold();
            r.enable("jdk.GCPhasePause").withoutThreshold();
            r.start();
            MonotonicClock.sample();
            before = System.nanoTime();
            System.gc();
            after = System.nanoTime();
            r.stop();
            r.dump(file);
            List<RecordedEvent> events = RecordingFile.readAllEvents(file);
            List<RecordedEvent> samples = events.stream()
                    .filter(e -> e.getEventType().getName().equals("dev.usertrace.agent.ClockSample"))
                    .collect(Collectors.toList());
            assertEquals(1, samples.size(), "clock samples in " + events);
            MonotonicClock clock = new MonotonicClock();
            clock.onSample(samples.get(0));
            List<RecordedEvent> pauses = events.stream().filter(e -> e.getEventType().getName().equals("jdk.GCPhasePause"))
                    .collect(Collectors.toList());
            assertFalse(pauses.isEmpty(), "no jdk.GCPhasePause in " + events);
            boolean inside = false;
            for (RecordedEvent p : pauses) {
                long start = clock.monotonicNs(p.getStartTime());
                long end = start + p.getDuration().toNanos();
                inside |= start >= before && end <= after && end > start;
            }
            assertTrue(inside, "no pause within " + before + ".." + after + ": " + pauses.stream()
                    .map(p -> clock.monotonicNs(p.getStartTime()) + "+" + p.getDuration().toNanos()).collect(Collectors.toList()));
        } finally {
            Files.deleteIfExists(file);
        }
    }
}

package dev.usertrace.agent;

import java.time.Instant;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.consumer.RecordedEvent;

/**
 * Converts a JFR event's start time to CLOCK_MONOTONIC nanoseconds, the
 * clock of a completed span's {@code span_start_ns} (and of perf's and
 * {@code usertrace record}'s timestamps).
 *
 * <h2>Why not simply subtract "wall clock minus nanoTime"</h2>
 * JFR stamps an event with ticks of {@code os::elapsed_counter()}, which on
 * Linux is {@code System.nanoTime()}'s clock, CLOCK_MONOTONIC (less a
 * constant). {@code RecordedEvent.getStartTime()} turns the ticks into an
 * {@link Instant} with one pair read when the chunk began: wall time =
 * chunk's wall start + (ticks - chunk's start ticks). So within a chunk the
 * Instant is CLOCK_MONOTONIC plus a constant, but that constant is the wall
 * clock's offset <em>when the chunk began</em>, which may be long ago. NTP
 * slews the wall clock against CLOCK_MONOTONIC by up to 500 ppm (tens of ms
 * an hour at typical rates), so the offset read now can be off by more than
 * a GC pause lasts.
 *
 * <h2>How</h2>
 * The agent measures JFR's own mapping: about once a second (JFR's flush
 * period) it commits a {@link ClockSample}, a JFR event that carries the
 * {@code System.nanoTime()} read between its begin and end. JFR gives it a start and
 * a duration in the same mapping as every other event, so
 * {@code offset = Instant(start + duration / 2) - nanoTime}, exact to half
 * the sample's length, holds for every event of that chunk:
 * {@code span_start_ns = Instant(event start) - offset}. A sample is
 * normally well under a microsecond long, but a thread stopped inside one
 * (a safepoint, a busy CPU) stretches it, and half the stall becomes an
 * error in every span's start: a CI run in the emulated guest once mapped
 * a GC pause 0.53 ms before the {@code System.gc()} call that caused it.
 * So {@link #sample()} takes {@value #SAMPLE_TRIES} and commits the
 * shortest; all of them stalling is far less likely than one. The
 * first events of a stream, before its first sample arrives, fall back to
 * the offset read at that moment ({@link #offsetNow()}), which is off only by
 * the drift since the chunk began, seconds ago at most.
 *
 * <p>A sample lands in the chunk current when it was committed; one from a
 * chunk before a rotation is off by the drift between the two chunks'
 * starts, until the next flush brings a sample of the new one.
 */
final class MonotonicClock {
    /** The name of {@link ClockSample}. */
    static final String CLOCK_SAMPLE = "dev.usertrace.agent.ClockSample";

    /** The JFR event of {@link #sample()}; enabled in the agent's stream only. */
    @Name(CLOCK_SAMPLE)
    @Label("usertrace clock sample")
    @Description("System.nanoTime() read inside the event, so the usertrace agent can map JFR times to CLOCK_MONOTONIC")
    @StackTrace(false)
    static final class ClockSample extends jdk.jfr.Event {
        @Label("nanoTime")
        long nanoTime;
    }

    /** Wall ns minus CLOCK_MONOTONIC ns in JFR's mapping, once a sample came. */
    private volatile long offset;
    private volatile boolean sampled;

    /** How many samples {@link #sample()} takes to commit the shortest. */
    static final int SAMPLE_TRIES = 5;

    /**
     * Commits the shortest of {@value #SAMPLE_TRIES} samples; the stream
     * delivers it to {@link #onSample}. Each is timed from before its
     * {@code begin()} to after its {@code end()}, so a stall anywhere inside
     * it counts against it.
     */
    static void sample() {
        ClockSample shortest = null;
        long shortestNs = Long.MAX_VALUE;
        for (int i = 0; i < SAMPLE_TRIES; i++) {
            ClockSample s = new ClockSample();
            long before = System.nanoTime();
            s.begin();
            s.nanoTime = System.nanoTime();
            s.end();
            long took = System.nanoTime() - before;
            if (took < shortestNs) {
                shortest = s;
                shortestNs = took;
            }
        }
        shortest.commit();
    }

    void onSample(RecordedEvent e) {
        long middle = epochNs(e.getStartTime()) + e.getDuration().toNanos() / 2;
        offset = middle - e.getLong("nanoTime");
        sampled = true;
    }

    /** The offset of the last sample (0 before one came). */
    long offsetNs() {
        return offset;
    }

    /** {@code t}, a JFR time, on CLOCK_MONOTONIC in ns. */
    long monotonicNs(Instant t) {
        return epochNs(t) - (sampled ? offset : offsetNow());
    }

    /**
     * Wall minus monotonic now: the wall read sits between two monotonic
     * ones, and of {@value #SAMPLE_TRIES} tries the tightest counts, for
     * the reason {@link #sample()} takes several.
     */
    static long offsetNow() {
        long offset = 0;
        long tightest = Long.MAX_VALUE;
        for (int i = 0; i < SAMPLE_TRIES; i++) {
            long before = System.nanoTime();
            Instant wall = Instant.now();
            long after = System.nanoTime();
            if (after - before < tightest) {
                tightest = after - before;
                offset = epochNs(wall) - (before + (after - before) / 2);
            }
        }
        return offset;
    }

    static long epochNs(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }
}

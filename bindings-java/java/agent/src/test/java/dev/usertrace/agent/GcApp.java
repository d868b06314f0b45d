package dev.usertrace.agent;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.RecordingState;
import jdk.jfr.consumer.RecordingStream;

/**
 * Run under the agent and {@code usertrace record}: marks each System.gc()
 * with {@code gcapp_mark(round, phase)} events before and after it, once
 * the recorder listens and the agent's JFR stream runs.
 *
 * <p>{@code GcApp 1 at-start}: one round on main's first lines, waiting for
 * nothing (the agent's {@code startwait} option is what should make it
 * count), then only for JFR to hand the collection over before exiting.
 */
public final class GcApp {
    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        boolean atStart = args.length > 1 && args[1].equals("at-start");
        try (Provider p = new Provider("gcapp")) {
            Tracepoint mark = p.tracepoint("mark", Field.u32("round"), Field.string("phase"));
            if (atStart) {
                collect(mark, rounds, 0);
            }
            // Starting JFR took the agent 40 s once, in a guest on a busy host.
            await(120, "the recorder and the agent's JFR stream", () -> mark.isEnabled() && jfrRunning());
            // JFR hands events to a stream about once a second, later under
            // emulation, and a stream closed at exit loses what it was not
            // handed yet (JDK 17 has no RecordingStream.stop()). A stream of
            // the app's own, reading the same repository as the agent's,
            // says when JFR delivers, and when the rounds' collections have
            // been handed over.
            try (RecordingStream own = new RecordingStream()) {
                AtomicInteger flushes = new AtomicInteger();
                AtomicInteger systemGcs = new AtomicInteger();
                own.enable("jdk.GarbageCollection").withoutThreshold();
                own.onEvent("jdk.GarbageCollection", e -> {
                    if ("System.gc()".equals(e.getString("cause"))) {
                        systemGcs.incrementAndGet();
                    }
                });
                own.onFlush(flushes::incrementAndGet);
                own.startAsync();
                await(60, "JFR to deliver", () -> flushes.get() > 0);
                if (!atStart) {
                    collect(mark, rounds, 500);
                    await(60, rounds + " System.gc() collections from JFR", () -> systemGcs.get() >= rounds);
                }
                // Two more flushes: the agent's stream had the same chunks to read.
                int seen = flushes.get();
                await(60, "two more JFR flushes", () -> flushes.get() >= seen + 2);
            }
        }
        System.out.println("gcapp: done");
    }

    /** Runs {@code rounds} of System.gc() between marks, each followed by {@code pauseMillis} of sleep. */
    static void collect(Tracepoint mark, int rounds, long pauseMillis) throws InterruptedException {
        for (int round = 1; round <= rounds; round++) {
            mark.emit(round, "before");
            System.gc();
            mark.emit(round, "after");
            Thread.sleep(pauseMillis);
        }
    }

    /** Waits up to {@code seconds} for {@code done}, or exits saying what did not come. */
    static void await(int seconds, String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                System.out.println("gcapp: waited " + seconds + " s for " + what + " (JFR running: " + jfrRunning() + ")");
                System.exit(4);
            }
            Thread.sleep(20);
        }
    }

    /** Whether the agent's RecordingStream records. */
    static boolean jfrRunning() {
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

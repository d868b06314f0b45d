package dev.usertrace.agent;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import java.util.concurrent.TimeUnit;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.RecordingState;

/**
 * Run under the agent and {@code usertrace record}: marks each System.gc()
 * with {@code gcapp_mark(round, phase)} events before and after it, once
 * the recorder listens and the agent's JFR stream runs.
 */
public final class GcApp {
    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        try (Provider p = new Provider("gcapp")) {
            Tracepoint mark = p.tracepoint("mark", Field.u32("round"), Field.string("phase"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!(mark.isEnabled() && jfrRunning()) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            if (!mark.isEnabled() || !jfrRunning()) {
                System.out.println("gcapp: recorder attached " + mark.isEnabled() + ", JFR running " + jfrRunning());
                System.exit(3);
            }
            for (int round = 1; round <= rounds; round++) {
                mark.emit(round, "before");
                System.gc();
                mark.emit(round, "after");
                Thread.sleep(500);
            }
            // JFR hands its events over about once a second: let the last ones through.
            Thread.sleep(3000);
        }
        System.out.println("gcapp: done");
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

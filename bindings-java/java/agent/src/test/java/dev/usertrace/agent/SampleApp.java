package dev.usertrace.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/** What the agent tests run under the agent: rounds of garbage, System.gc(), a log record and a thrown exception. */
public final class SampleApp {
    private static final Logger LOG = Logger.getLogger("sample");

    public static void main(String[] args) throws InterruptedException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        long sleep = args.length > 1 ? Long.parseLong(args[1]) : 300;
        // "wait-for-jfr": start once the agent's JFR stream records, and end
        // after its next deliveries (about one a second), so that how long
        // JFR takes to start (seconds, under emulation) decides nothing.
        boolean waitForJfr = args.length > 2 && args[2].equals("wait-for-jfr");
        if (waitForJfr) {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!GcApp.jfrRunning() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            if (!GcApp.jfrRunning()) {
                System.out.println("sample: the agent's JFR stream did not start within 60 s");
                System.exit(3);
            }
        }
        List<byte[]> keep = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            for (int i = 0; i < 2000; i++) {
                keep.add(new byte[1024]);
            }
            keep.clear();
            System.gc();
            LOG.info("sample: round " + round);
            try {
                throw new IllegalStateException("sample failure " + round);
            } catch (IllegalStateException e) {
                LOG.warning("sample: caught " + e.getMessage());
            }
            Thread.sleep(sleep);
        }
        if (waitForJfr) {
            Thread.sleep(3000);
        }
        System.out.println("sample: done");
    }
}

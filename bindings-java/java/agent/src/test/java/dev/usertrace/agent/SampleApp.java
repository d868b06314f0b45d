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
        System.out.println("sample: done");
    }
}

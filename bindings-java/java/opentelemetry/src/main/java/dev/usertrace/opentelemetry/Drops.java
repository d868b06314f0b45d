package dev.usertrace.opentelemetry;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What an exporter could not write: counted, for its {@code dropped()}, and
 * said once in its log, so that a flood of failures is one line.
 */
final class Drops {
    private final Logger log;
    private final String what;
    private final String counter;
    private final AtomicLong count = new AtomicLong();
    private final AtomicBoolean said = new AtomicBoolean();

    /**
     * @param log     the exporter's logger
     * @param what    what was not written, for the message ("a span")
     * @param counter where the count is read ("UsertraceSpanExporter.dropped()")
     */
    Drops(Logger log, String what, String counter) {
        this.log = log;
        this.what = what;
        this.counter = counter;
    }

    /** Counts one item not written because of {@code e}. */
    void add(RuntimeException e) {
        count.incrementAndGet();
        if (said.compareAndSet(false, true)) {
            log.log(Level.WARNING, "usertrace: " + what + " could not be written (counted in " + counter + "): " + e.getMessage());
        }
    }

    /** How many items were not written. */
    long count() {
        return count.get();
    }
}

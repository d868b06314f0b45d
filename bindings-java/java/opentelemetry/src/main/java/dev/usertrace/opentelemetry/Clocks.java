package dev.usertrace.opentelemetry;

import java.time.Instant;

/** The SDK's times are Unix; usertrace events' are CLOCK_MONOTONIC. */
final class Clocks {
    private Clocks() {}

    /**
     * What to add to a Unix time in ns to get CLOCK_MONOTONIC, taken now, once
     * per batch as Python's exporter does. {@link System#nanoTime()} is
     * CLOCK_MONOTONIC on Linux, the one OS usertrace runs on.
     */
    static long monotonicMinusUnixNs() {
        Instant now = Instant.now();
        long monotonic = System.nanoTime();
        return monotonic - (now.getEpochSecond() * 1_000_000_000L + now.getNano());
    }
}

package dev.usertrace.opentelemetry;

import java.util.concurrent.TimeUnit;

/**
 * Waits, in a test application, until a recorder listens to the span events:
 * an application started under {@code usertrace record} may run before the
 * recorder enables its events.
 */
final class RecorderListening {
    private RecorderListening() {}

    static void await() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Registration.spans().isEnabled()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no recorder listened to " + Registration.provider() + "_otel_span in 60 s");
            }
            Thread.sleep(20);
        }
    }
}

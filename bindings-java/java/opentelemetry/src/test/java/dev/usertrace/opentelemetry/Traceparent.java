package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A W3C {@code traceparent} header, {@code 00-TRACE-SPAN-FLAGS}. Only the
 * flags' sampled bit is the sampler's: the SDK sets the random bit (02,
 * W3C Trace Context level 2) on a root span's trace id it made itself.
 */
record Traceparent(String traceId, String spanId, int flags) {
    static Traceparent parse(String header) {
        assertTrue(header != null && header.matches("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}"), "traceparent " + header);
        String[] parts = header.split("-");
        return new Traceparent(parts[1], parts[2], Integer.parseInt(parts[3], 16));
    }

    boolean sampled() {
        return (flags & 1) != 0;
    }
}

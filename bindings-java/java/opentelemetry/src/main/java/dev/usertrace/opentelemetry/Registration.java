package dev.usertrace.opentelemetry;

import dev.usertrace.OtelLogs;
import dev.usertrace.OtelResources;
import dev.usertrace.OtelSpans;
import dev.usertrace.UsertraceException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The process's span, log record and resource events, registered once for every
 * exporter. Where usertrace cannot register them (no user_events and no
 * shared memory, or the native library did not load) it says why once in the
 * log, and the exporters fail their exports, as Python's do.
 */
final class Registration {
    /** Names the events' provider: {@code <provider>_otel_span}; default {@code usertrace}. */
    static final String PROVIDER_ENV = "USERTRACE_OTEL_PROVIDER";
    static final String DEFAULT_PROVIDER = "usertrace";

    private static final Logger LOG = Logger.getLogger(Registration.class.getName());

    private static OtelSpans spans;
    private static OtelLogs logs;
    private static OtelResources resources;
    private static UsertraceException unavailable;

    private Registration() {}

    static String provider() {
        String named = System.getenv(PROVIDER_ENV);
        return named == null || named.isEmpty() ? DEFAULT_PROVIDER : named;
    }

    /** The span events; null where usertrace cannot register them. */
    static synchronized OtelSpans spans() {
        registerOnce();
        return spans;
    }

    /** The log record events; null where usertrace cannot register them. */
    static synchronized OtelLogs logs() {
        registerOnce();
        return logs;
    }

    /** The resource event; null where usertrace cannot register it. */
    static synchronized OtelResources resources() {
        registerOnce();
        return resources;
    }

    private static void registerOnce() {
        if (spans != null || unavailable != null) {
            return;
        }
        try {
            OtelSpans s = OtelSpans.register(provider());
            logs = OtelLogs.register(provider());
            resources = OtelResources.register(provider());
            spans = s;
        } catch (UsertraceException e) {
            unavailable = e;
            LOG.log(Level.WARNING, "usertrace: OpenTelemetry spans and logs will not be recorded: " + e.getMessage());
        }
    }
}

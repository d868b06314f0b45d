package dev.usertrace.logback;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxy;
import ch.qos.logback.core.UnsynchronizedAppenderBase;
import dev.usertrace.LogConvention;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.UsertraceException;
import java.time.Instant;

/**
 * A Logback appender that writes every event as one user_events event,
 * {@code <provider>_log} ({@code jvm_log} by default), with the fields of the
 * usertrace agent's java.util.logging bridge: {@code time_ns} (u64, ns since
 * the Unix epoch), {@code level} (i32, on java.util.logging's scale: TRACE
 * 300, DEBUG 500, INFO 800, WARN 900, ERROR 1000), {@code logger},
 * {@code thread_id} (u64), {@code message} (the formatted message, no layout)
 * and {@code thrown} (the throwable's {@code toString()}, or empty). The
 * kernel adds the process and thread ids and names to each event.
 *
 * <pre>{@code
 * <appender name="USERTRACE" class="dev.usertrace.logback.UsertraceAppender">
 *   <provider>myapp</provider>   <!-- optional: myapp_log; default jvm -->
 * </appender>
 * <root level="INFO"><appender-ref ref="USERTRACE"/></root>
 * }</pre>
 *
 * <p>While no tracer listens, {@link #doAppend} is one read of the
 * tracepoint's enable word: no filter runs and nothing is formatted. Attach it
 * to the logger directly, not behind an {@code AsyncAppender}: it is cheap
 * enough, and the event is written on the thread that logged, which the
 * kernel records. Without user_events (or off Linux) it stays a no-op, and
 * says why in Logback's status messages.
 */
public final class UsertraceAppender extends UnsynchronizedAppenderBase<ILoggingEvent> {
    private String provider = LogConvention.DEFAULT_PROVIDER;
    private Provider owner;
    /**
     * Set by start() before {@code started}; read without a lock: a Tracepoint
     * is safe to publish by a race (its fields are final, its state volatile),
     * and a thread that still sees null drops the event, as before start.
     */
    private Tracepoint tracepoint;

    /** The provider: the event is {@code <provider>_log}. Set before {@link #start()}. */
    public void setProvider(String provider) {
        this.provider = provider;
    }

    public String getProvider() {
        return provider;
    }

    /** The tracepoint, once started (for tests in this package). */
    Tracepoint tracepoint() {
        return tracepoint;
    }

    @Override
    public void start() {
        if (isStarted()) {
            return;
        }
        if (provider == null) {
            addError("usertrace: no provider for appender [" + name + "]");
            return;
        }
        Provider p;
        Tracepoint tp;
        try {
            p = new Provider(provider);
            tp = p.tracepoint(LogConvention.NAME, LogConvention.fields());
        } catch (RuntimeException e) {
            // A bad provider name (INVALID_NAME), or the kernel has the name with other fields (FIELDS_MISMATCH).
            addError("usertrace: cannot register " + provider + "_" + LogConvention.NAME + " for appender [" + name + "]", e);
            return;
        }
        UsertraceException why = tp.registrationError();
        if (why != null) {
            addInfo("usertrace: " + tp.name() + " stays disabled: " + why.getMessage());
        } else {
            addInfo("usertrace: registered " + tp.name());
        }
        owner = p;
        tracepoint = tp;
        super.start();
    }

    @Override
    public void stop() {
        if (!isStarted()) {
            return;
        }
        super.stop();
        // The kernel clears the bit: isEnabled() reads false from here on.
        try {
            owner.close();
        } catch (RuntimeException e) {
            addError("usertrace: cannot unregister " + tracepoint.name(), e);
        }
    }

    /** The enable word first: while nobody listens, no filter, no lock, no formatting. */
    @Override
    public void doAppend(ILoggingEvent event) {
        Tracepoint tp = tracepoint;
        if (tp != null && tp.isEnabled()) {
            super.doAppend(event);
        }
    }

    @Override
    protected void append(ILoggingEvent event) {
        Tracepoint tp = tracepoint;
        if (tp == null || !tp.isEnabled()) {
            return;
        }
        try {
            Instant t = event.getInstant();
            tp.event()
                    .put(t.getEpochSecond() * 1_000_000_000L + t.getNano())
                    .put(julLevel(event.getLevel()))
                    .put(LogConvention.text(event.getLoggerName()))
                    .put(threadId(event))
                    .put(LogConvention.text(event.getFormattedMessage()))
                    .put(LogConvention.text(thrown(event.getThrowableProxy())))
                    .emit();
        } catch (RuntimeException e) {
            // e.g. PAYLOAD_TOO_LARGE: the event is dropped, as the agent's handler drops it.
            addError("usertrace: cannot write a log event to " + tp.name(), e);
        }
    }

    /**
     * Logback's level on java.util.logging's scale, as SLF4J's own JUL binding
     * (slf4j-jdk14) maps it: TRACE is FINEST, DEBUG FINE, INFO INFO, WARN
     * WARNING, ERROR SEVERE. jul-to-slf4j maps those back to the same levels.
     */
    static int julLevel(Level level) {
        int l = level == null ? Level.INFO_INT : level.toInt();
        if (l >= Level.ERROR_INT) {
            return 1000;
        } else if (l >= Level.WARN_INT) {
            return 900;
        } else if (l >= Level.INFO_INT) {
            return 800;
        } else if (l >= Level.DEBUG_INT) {
            return 500;
        }
        return 300;
    }

    /**
     * Logback events carry the thread's name, not its id: the id is the current
     * thread's when the event is appended on the thread that logged it (an
     * appender attached to the logger), else unknown (0).
     */
    private static long threadId(ILoggingEvent event) {
        Thread current = Thread.currentThread();
        return current.getName().equals(event.getThreadName()) ? current.getId() : 0;
    }

    /** {@code Throwable.toString()}, as the agent's handler writes it; a deserialized event has only the proxy's text. */
    static String thrown(IThrowableProxy proxy) {
        if (proxy == null) {
            return "";
        }
        if (proxy instanceof ThrowableProxy) {
            Throwable t = ((ThrowableProxy) proxy).getThrowable();
            if (t != null) {
                return t.toString();
            }
        }
        String message = proxy.getMessage();
        return message == null ? proxy.getClassName() : proxy.getClassName() + ": " + message;
    }
}

package dev.usertrace.log4j2;

import dev.usertrace.LogConvention;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.UsertraceException;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.Core;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.appender.AppenderLoggingException;
import org.apache.logging.log4j.core.config.Property;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginBuilderAttribute;
import org.apache.logging.log4j.core.config.plugins.PluginBuilderFactory;
import org.apache.logging.log4j.core.time.Instant;
import org.apache.logging.log4j.message.Message;
import org.apache.logging.log4j.status.StatusLogger;

/**
 * A Log4j2 appender that writes every event as one user_events event,
 * {@code <provider>_log} ({@code jvm_log} by default), with the fields of the
 * usertrace agent's java.util.logging bridge: {@code time_ns} (u64, ns since
 * the Unix epoch), {@code level} (i32, on java.util.logging's scale: TRACE
 * 300, DEBUG 500, INFO 800, WARN 900, ERROR 1000, FATAL 1100), {@code logger},
 * {@code thread_id} (u64), {@code message} (the formatted message, no layout)
 * and {@code thrown} (the throwable's {@code toString()}, or empty). The
 * kernel adds the process and thread ids and names to each event.
 *
 * <pre>{@code
 * <Appenders>
 *   <Usertrace name="USERTRACE"/>                  <!-- or provider="myapp": myapp_log -->
 * </Appenders>
 * <Loggers>
 *   <Root level="INFO"><AppenderRef ref="USERTRACE"/></Root>
 * </Loggers>
 * }</pre>
 *
 * <p>While no tracer listens, {@link #append} is one read of the
 * tracepoint's enable word: nothing of the event is read or formatted. With
 * asynchronous loggers the kernel records the thread that appends, not the
 * one that logged (whose id is {@code thread_id}). Without user_events (or
 * off Linux) it stays a no-op, and says why in Log4j's status log (at DEBUG).
 */
@Plugin(name = UsertraceAppender.PLUGIN_NAME, category = Core.CATEGORY_NAME, elementType = Appender.ELEMENT_TYPE,
        printObject = true)
public final class UsertraceAppender extends AbstractAppender {
    /** The element name in log4j2.xml: {@code <Usertrace name="..."/>}. */
    public static final String PLUGIN_NAME = "Usertrace";

    private final Provider owner;
    private final Tracepoint tracepoint;

    private UsertraceAppender(String name, Filter filter, boolean ignoreExceptions, Property[] properties,
            Provider owner, Tracepoint tracepoint) {
        super(name, filter, null, ignoreExceptions, properties);
        this.owner = owner;
        this.tracepoint = tracepoint;
    }

    @PluginBuilderFactory
    public static Builder newBuilder() {
        return new Builder();
    }

    /** Configures the appender: {@code name} (required), {@code provider}, {@code ignoreExceptions}, a filter. */
    public static final class Builder extends AbstractAppender.Builder<Builder>
            implements org.apache.logging.log4j.core.util.Builder<UsertraceAppender> {
        @PluginBuilderAttribute
        private String provider = LogConvention.DEFAULT_PROVIDER;

        private Builder() {}

        /** The provider: the event is {@code <provider>_log}. */
        public Builder setProvider(String provider) {
            this.provider = provider;
            return this;
        }

        /** The appender, or null (Log4j's convention), having said why in the status log. */
        @Override
        public UsertraceAppender build() {
            StatusLogger status = StatusLogger.getLogger();
            if (getName() == null) {
                status.error("usertrace: a Usertrace appender needs a name");
                return null;
            }
            if (provider == null) {
                status.error("usertrace: no provider for appender [{}]", getName());
                return null;
            }
            Provider p;
            Tracepoint tp;
            try {
                p = new Provider(provider);
                tp = p.tracepoint(LogConvention.NAME, LogConvention.fields());
            } catch (RuntimeException e) {
                // A bad provider name (INVALID_NAME), or the kernel has the name with other fields (FIELDS_MISMATCH).
                status.error("usertrace: cannot register {}_{} for appender [{}]", provider, LogConvention.NAME, getName(), e);
                return null;
            }
            UsertraceException why = tp.registrationError();
            if (why != null) {
                status.debug("usertrace: {} stays disabled: {}", tp.name(), why.getMessage());
            } else {
                status.debug("usertrace: registered {}", tp.name());
            }
            return new UsertraceAppender(getName(), getFilter(), isIgnoreExceptions(), getPropertyArray(), p, tp);
        }
    }

    /** The provider named in the configuration. */
    public String getProvider() {
        return owner.name();
    }

    /** The tracepoint (for tests in this package). */
    Tracepoint tracepoint() {
        return tracepoint;
    }

    /** The enable word first: while nobody listens, nothing of the event is read. */
    @Override
    public void append(LogEvent event) {
        Tracepoint tp = tracepoint;
        if (!tp.isEnabled()) {
            return;
        }
        try {
            Instant t = event.getInstant();
            tp.event()
                    .put(t.getEpochSecond() * 1_000_000_000L + t.getNanoOfSecond())
                    .put(julLevel(event.getLevel()))
                    .put(LogConvention.text(event.getLoggerName()))
                    .put(event.getThreadId())
                    .put(LogConvention.text(message(event.getMessage())))
                    .put(LogConvention.text(thrown(event.getThrown())))
                    .emit();
        } catch (RuntimeException e) {
            // e.g. PAYLOAD_TOO_LARGE: the event is dropped, as the agent's handler drops it.
            error("usertrace: cannot write a log event to " + tp.name(), event, e);
            if (!ignoreExceptions()) {
                throw new AppenderLoggingException("usertrace: cannot write a log event to " + tp.name(), e);
            }
        }
    }

    @Override
    public boolean stop(long timeout, TimeUnit timeUnit) {
        setStopping();
        boolean stopped = super.stop(timeout, timeUnit, false);
        // The kernel clears the bit: isEnabled() reads false from here on.
        try {
            owner.close();
        } catch (RuntimeException e) {
            StatusLogger.getLogger().error("usertrace: cannot unregister {}", tracepoint.name(), e);
        }
        setStopped();
        return stopped;
    }

    /**
     * Log4j's level on java.util.logging's scale, as Log4j's own JUL bridge
     * maps the standard levels (TRACE FINEST, DEBUG FINE, INFO INFO, WARN
     * WARNING, ERROR SEVERE), and as the Logback appender maps SLF4J's.
     * FATAL, for which JUL has no level, is 1100: above SEVERE, so that a
     * filter on {@code level >= 1000} keeps it, and apart from ERROR. A custom
     * level counts as the standard level it falls in.
     */
    static int julLevel(Level level) {
        if (level == null) {
            return 800;
        }
        switch (level.getStandardLevel()) {
            case OFF:
            case FATAL:
                return 1100;
            case ERROR:
                return 1000;
            case WARN:
                return 900;
            case INFO:
                return 800;
            case DEBUG:
                return 500;
            default: // TRACE, ALL
                return 300;
        }
    }

    private static String message(Message m) {
        return m == null ? "" : m.getFormattedMessage();
    }

    /** {@code Throwable.toString()}, as the agent's handler writes it. */
    static String thrown(Throwable t) {
        return t == null ? "" : t.toString();
    }
}

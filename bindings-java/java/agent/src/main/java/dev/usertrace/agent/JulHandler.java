package dev.usertrace.agent;

import dev.usertrace.LogConvention;
import dev.usertrace.Tracepoint;
import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;

/**
 * Forwards java.util.logging records to {@code <provider>_log}. While no
 * tracer listens, {@link #publish} is one read of the enable word: no
 * formatting, no lock, no allocation.
 */
final class JulHandler extends Handler {
    private final Tracepoint tp;
    private final Formatter formatter = new SimpleFormatter();

    JulHandler(Tracepoint tp) {
        this.tp = tp;
    }

    @Override
    public void publish(LogRecord record) {
        if (!tp.isEnabled() || record == null) {
            return;
        }
        try {
            Instant t = record.getInstant();
            Throwable thrown = record.getThrown();
            String message = formatter.formatMessage(record);
            tp.event()
                    .put(t.getEpochSecond() * 1_000_000_000L + t.getNano())
                    .put(record.getLevel().intValue())
                    .put(LogConvention.text(record.getLoggerName()))
                    .put(record.getLongThreadID())
                    .put(LogConvention.text(message))
                    .put(LogConvention.text(thrown == null ? null : thrown.toString()))
                    .emit();
        } catch (RuntimeException e) {
            reportError("usertrace: cannot forward a log record", e, java.util.logging.ErrorManager.WRITE_FAILURE);
        }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
}

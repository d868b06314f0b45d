package dev.usertrace.opentelemetry;

import dev.usertrace.OtelLogs;
import dev.usertrace.UsertraceException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import io.opentelemetry.sdk.logs.export.LogRecordExporter;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

/**
 * Writes each log record of a batch as a usertrace event
 * ({@code <provider>_otel_log}, {@code otel.logs.exporter=usertrace}); like
 * the span exporter, it never blocks, costs one check per batch while nobody
 * records, and counts what it could not write in {@link #dropped()}.
 */
public final class UsertraceLogRecordExporter implements LogRecordExporter {
    private static final Logger LOG = Logger.getLogger(UsertraceLogRecordExporter.class.getName());

    private final AtomicBoolean shutdown = new AtomicBoolean();
    private final Drops drops = new Drops(LOG, "a log record", "UsertraceLogRecordExporter.dropped()");
    private final ResourceWriter resource = new ResourceWriter();

    /** An exporter; the process's events are registered now, if they are not yet. */
    public UsertraceLogRecordExporter() {
        // As the span exporter does, for the same reason.
        Registration.logs();
    }

    @Override
    public CompletableResultCode export(Collection<LogRecordData> batch) {
        if (shutdown.get()) {
            return CompletableResultCode.ofFailure();
        }
        OtelLogs events = Registration.logs();
        if (events == null) {
            return CompletableResultCode.ofFailure();
        }
        if (!events.isEnabled()) {
            return CompletableResultCode.ofSuccess();
        }
        boolean resourceWritten = resource.write(batch, LogRecordData::getResource);
        long failed = 0;
        for (OtlpLogs.Log log : OtlpLogs.of(batch)) {
            try {
                events.emit(log.traceIdHi(), log.traceIdLo(), log.spanId(), log.severityNumber(), log.body(),
                        log.scopeName(), log.scopeVersion(), log.otlp());
            } catch (UsertraceException | IllegalArgumentException e) {
                failed++;
                drops.add(e);
            }
        }
        return failed == 0 && resourceWritten ? CompletableResultCode.ofSuccess() : CompletableResultCode.ofFailure();
    }

    /** How many log records could not be written. */
    public long dropped() {
        return drops.count();
    }

    /** Done at once: every record is written when it is exported. */
    @Override
    public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
    }

    /** Later exports fail; nothing is buffered here. */
    @Override
    public CompletableResultCode shutdown() {
        shutdown.set(true);
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public String toString() {
        return "UsertraceLogRecordExporter{provider=" + Registration.provider() + "}";
    }
}

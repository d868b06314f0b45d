package dev.usertrace.opentelemetry;

import dev.usertrace.OtelSpans;
import dev.usertrace.UsertraceException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

/**
 * Writes each span of a batch as usertrace events ({@code <provider>_otel_span}),
 * in the calling thread, carrying the span as the OTLP protobuf the SDK's own
 * OTLP exporter would send; {@code usertrace record --otlp} sends it on.
 *
 * <p>It never blocks: an emit writes into a kernel buffer or a shared-memory
 * ring. While no recorder listens, a batch costs one check. Spans it could not
 * write are counted in {@link #dropped()} and said once in the log. With the
 * SDK's autoconfiguration: {@code otel.traces.exporter=usertrace}.
 */
public final class UsertraceSpanExporter implements SpanExporter {
    private static final Logger LOG = Logger.getLogger(UsertraceSpanExporter.class.getName());

    private final AtomicBoolean shutdown = new AtomicBoolean();
    private final Drops drops = new Drops(LOG, "a span", "UsertraceSpanExporter.dropped()");
    private final ResourceWriter resource = new ResourceWriter();

    /** An exporter; the process's events are registered now, if they are not yet. */
    public UsertraceSpanExporter() {
        // Registered now, not at the first export: a recorder already
        // listening (a node's agent) then attaches during the SDK's batch
        // delay, and sees the first batch.
        Registration.spans();
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
        if (shutdown.get()) {
            return CompletableResultCode.ofFailure();
        }
        OtelSpans events = Registration.spans();
        if (events == null) {
            return CompletableResultCode.ofFailure();
        }
        if (!events.isEnabled()) {
            return CompletableResultCode.ofSuccess();
        }
        // The resource first, so that a recorder that just attached names this
        // batch's spans by it.
        boolean resourceWritten = resource.write(batch, SpanData::getResource);
        long failed = 0;
        long monotonicMinusUnix = Clocks.monotonicMinusUnixNs();
        for (OtlpSpans.Span span : OtlpSpans.of(batch)) {
            try {
                events.emit(Math.max(0, span.startUnixNs() + monotonicMinusUnix),
                        Math.max(0, span.endUnixNs() - span.startUnixNs()), span.traceIdHi(), span.traceIdLo(),
                        span.spanId(), span.parentSpanId(), span.name(), span.scopeName(), span.scopeVersion(),
                        span.statusCode(), span.otlp());
            } catch (UsertraceException | IllegalArgumentException e) {
                failed++;
                drops.add(e);
            }
        }
        return failed == 0 && resourceWritten ? CompletableResultCode.ofSuccess() : CompletableResultCode.ofFailure();
    }

    /** How many spans could not be written. */
    public long dropped() {
        return drops.count();
    }

    /** Done at once: every span is written when it is exported. */
    @Override
    public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
    }

    /** Later exports fail, as the SDK's contract says; nothing is buffered here. */
    @Override
    public CompletableResultCode shutdown() {
        shutdown.set(true);
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public String toString() {
        return "UsertraceSpanExporter{provider=" + Registration.provider() + "}";
    }
}

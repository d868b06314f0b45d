package dev.usertrace.opentelemetry;

import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.testing.trace.TestSpanData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import java.util.List;

/**
 * Exports twice each where usertrace cannot register its events (the test
 * starts it with an unusable USERTRACE_TRANSPORT); prints each result.
 */
public final class UnavailableApp {
    public static void main(String[] args) {
        SpanData span = TestSpanData.builder()
                .setSpanContext(SpanContext.create("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7",
                        TraceFlags.getSampled(), TraceState.getDefault()))
                .setName("x").setKind(SpanKind.INTERNAL).setStartEpochNanos(1).setEndEpochNanos(2)
                .setStatus(StatusData.unset()).setHasEnded(true).build();
        UsertraceSpanExporter spans = new UsertraceSpanExporter();
        UsertraceLogRecordExporter logs = new UsertraceLogRecordExporter();
        for (int i = 0; i < 2; i++) {
            System.out.println("span export success=" + spans.export(List.of(span)).isSuccess());
            System.out.println("log export success=" + logs.export(List.of()).isSuccess());
        }
        System.out.println("flush success=" + spans.flush().isSuccess());
    }
}

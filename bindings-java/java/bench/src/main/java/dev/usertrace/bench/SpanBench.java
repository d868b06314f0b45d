package dev.usertrace.bench;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Span;
import dev.usertrace.SpanTracepoint;
import dev.usertrace.Tracepoint;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A span begun and closed ({@code span.event().put(n).begin()}, a u32 field):
 * while nobody listens, against two isEnabled() checks (the begin's and the
 * end's, the least a begin and an end could cost); while ftrace records,
 * against one enabled 4-byte emit (a span writes two events: begin with its
 * 8-byte id and the u32, end with the id).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class SpanBench {
    Provider off;
    SpanTracepoint spanOff;
    Tracepoint checkA;
    Tracepoint checkB;
    Provider on;
    SpanTracepoint spanOn;
    Tracepoint emitOn;
    int n = 31;

    @Setup
    public void setUp() {
        off = new Provider("bench_span_off");
        spanOff = off.span("work", Field.u32("n"));
        checkA = off.tracepoint("check_a", Field.u32("n"));
        checkB = off.tracepoint("check_b", Field.u32("n"));
        on = new Provider("bench_span_on");
        spanOn = on.span("work", Field.u32("n"));
        emitOn = on.tracepoint("emit4", Field.u32("n"));
        for (String e : new String[] {spanOn.name(), "bench_span_on_span_end", emitOn.name()}) {
            Ftrace.enable(e, true);
        }
        if (!spanOn.isEnabled() || !emitOn.isEnabled() || spanOff.isEnabled()) {
            throw new IllegalStateException("the enabled tracepoints must be enabled, the disabled ones not");
        }
    }

    @TearDown
    public void tearDown() {
        for (String e : new String[] {spanOn.name(), "bench_span_on_span_end", emitOn.name()}) {
            Ftrace.enable(e, false);
        }
        off.close();
        on.close();
    }

    @Benchmark
    public boolean twoIsEnabledChecks() {
        return checkA.isEnabled() | checkB.isEnabled();
    }

    @Benchmark
    public long disabledSpanBeginClose() {
        try (Span s = spanOff.event().put(n).begin()) {
            return s.id();
        }
    }

    @Benchmark
    public void enabledEmit4Bytes() {
        if (emitOn.isEnabled()) {
            emitOn.event().put(n).emit();
        }
    }

    @Benchmark
    public long enabledSpanBeginClose() {
        try (Span s = spanOn.event().put(n).begin()) {
            return s.id();
        }
    }
}

package dev.usertrace.bench;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
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
 * One event {@code (u32, s64, string "hello")} written while ftrace records
 * it: Tracepoint.event()...emit() and emit(Object...) against one JNI call
 * doing a bare writev of the same bytes, laid out beforehand.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class EmitBench {
    static final String RAW = "bench_raw_writev";

    Provider provider;
    Tracepoint tp;
    long raw;
    ByteBuffer rawPayload;
    long rawAddress;
    int rawLength;
    long rawCuts;
    int a = 31;
    long b = -5;
    String c = "hello";

    @Setup
    public void setUp() {
        provider = new Provider("bench");
        tp = provider.tracepoint("emit", Field.u32("a"), Field.i64("b"), Field.string("c"));
        Ftrace.enable(tp.name(), true);
        raw = RawWritev.open0(Ftrace.TRACEFS.toString(), RAW + " u32 a;s64 b;__rel_loc char[] c");
        Ftrace.enable(RAW, true);
        byte[] s = (c + "\0").getBytes(StandardCharsets.UTF_8);
        rawPayload = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
        // u32 a, s64 b, rel_loc (length << 16 | offset from the end of the loc word), then the data.
        rawPayload.putInt(a).putLong(b).putInt(s.length << 16).put(s);
        rawLength = rawPayload.position();
        // After a (4), b (8), the loc word (4) and the string's bytes (5): its NUL.
        rawCuts = 4L | 12L << 16 | 16L << 32 | (long) (16 + s.length - 1) << 48;
        rawAddress = RawWritev.address(rawPayload);
        if (!tp.isEnabled()) {
            throw new IllegalStateException(tp.name() + " is not enabled: the benchmark would measure nothing");
        }
    }

    @TearDown
    public void tearDown() {
        Ftrace.enable(tp.name(), false);
        Ftrace.enable(RAW, false);
        provider.close();
        RawWritev.close0(raw);
    }

    @Benchmark
    public void emitEventWriter() {
        if (tp.isEnabled()) {
            tp.event().put(a).put(b).put(c).emit();
        }
    }

    @Benchmark
    public void emitObjects() {
        tp.emit(a, b, c);
    }

    @Benchmark
    public int rawJniWritev() {
        return RawWritev.writev0(raw, rawAddress, rawLength);
    }

    /**
     * The same bytes in the iovecs the core writes them in (index, a, b, the
     * rel_loc word, "hello", its NUL): the kernel's share of the gap between
     * an emit and {@link #rawJniWritev}, since the core does not copy values
     * into one buffer.
     */
    @Benchmark
    public int rawJniWritevCoreIovecs() {
        return RawWritev.writevCut0(raw, rawAddress, rawLength, rawCuts);
    }
}

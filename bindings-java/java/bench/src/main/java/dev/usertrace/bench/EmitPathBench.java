package dev.usertrace.bench;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.internal.Native;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
 * Native host only (no user_events): everything an emit does before the
 * kernel, against a JNI call that does nothing. The tracepoint is not
 * registered, so the bench sets its enable word itself: Java then encodes
 * and calls {@code emit0}, which decodes, checks the word, counts the emit
 * in and stops where the core finds no registration, short of the values'
 * check, the iovecs and the {@code writev}. EmitBench has the whole emit,
 * in the guest kernel.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class EmitPathBench {
    Provider provider;
    Tracepoint tp;
    ByteBuffer word;
    ByteBuffer payload = ByteBuffer.allocateDirect(64);
    long payloadAddress;
    int a = 31;
    long b = -5;
    String c = "hello";

    @Setup
    public void setUp() throws ReflectiveOperationException {
        provider = new Provider("bench");
        tp = provider.tracepoint("emit_path", Field.u32("a"), Field.i64("b"), Field.string("c"));
        if (tp.isRegistered()) {
            throw new IllegalStateException("this kernel has user_events: run EmitBench, which writes");
        }
        java.lang.reflect.Field handle = Tracepoint.class.getDeclaredField("handle");
        handle.setAccessible(true);
        // The word the kernel would set while a tracer listens: bit 0.
        word = Native.enableWord0(handle.getLong(tp)).order(ByteOrder.nativeOrder());
        word.putInt(0, 1);
        if (!tp.isEnabled()) {
            throw new IllegalStateException("setting the word did not enable " + tp.name());
        }
        payloadAddress = RawWritev.address(payload);
    }

    @TearDown
    public void tearDown() {
        word.putInt(0, 0);
        provider.close();
    }

    @Benchmark
    public void emitEventWriterUntilTheKernel() {
        if (tp.isEnabled()) {
            tp.event().put(a).put(b).put(c).emit();
        }
    }

    @Benchmark
    public void emitObjectsUntilTheKernel() {
        tp.emit(a, b, c);
    }

    @Benchmark
    public int jniCallDoingNothing() {
        return RawWritev.nothing0(0, payloadAddress, 22);
    }
}

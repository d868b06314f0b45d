package dev.usertrace.bench;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.internal.EnableWord;
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
 * isEnabled() on {@link EnableWord.Route#BUFFER}, in a fork of its own
 * that cannot load the JNI library: the JDK 24+ route before the constant
 * segment (tracepoint, its EnableWord, the ByteBuffer view, an opaque
 * VarHandle read). Run it in one JMH run with EnabledBench to set the two
 * routes side by side: {@code EnabledBench|EnabledBufferRouteBench}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Dusertrace.native.path=/nonexistent/libusertrace_jni.so")
@State(Scope.Benchmark)
public class EnabledBufferRouteBench {
    static volatile boolean flag;

    static final Tracepoint STATIC_TP = new Provider("bench_static").tracepoint("enabled_check", Field.u32("x"));

    Provider provider;
    Tracepoint tp;

    @Setup
    public void setUp() {
        if (EnableWord.route() != EnableWord.Route.BUFFER) {
            throw new IllegalStateException("the library loaded: route " + EnableWord.route());
        }
        provider = new Provider("bench");
        tp = provider.tracepoint("enabled_check", Field.u32("x"));
    }

    @TearDown
    public void tearDown() {
        provider.close();
    }

    @Benchmark
    public boolean bufferRouteIsEnabled() {
        return tp.isEnabled();
    }

    @Benchmark
    public boolean bufferRouteIsEnabledStaticFinal() {
        return STATIC_TP.isEnabled();
    }

    /** EnabledBench's baseline, again in this fork. */
    @Benchmark
    public boolean bufferRouteStaticVolatileBoolean() {
        return flag;
    }
}

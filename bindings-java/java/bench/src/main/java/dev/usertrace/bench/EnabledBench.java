package dev.usertrace.bench;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.internal.EnableWord;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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

/** isEnabled() against the cheapest flag Java has: a static volatile boolean. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class EnabledBench {
    static volatile boolean flag;
    static boolean plainFlag;
    static final VarHandle VIEW_INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    /** The route isEnabled() took before: an opaque VarHandle read of a direct buffer view. */
    final ByteBuffer view = ByteBuffer.allocateDirect(4);

    /** A flag on an object: what a flag costs once it is not static. */
    static final class Holder {
        volatile boolean flag;
    }

    final Holder holder = new Holder();
    /** The same flag on an object in a static final field: the floor for a static final tracepoint. */
    static final Holder STATIC_HOLDER = new Holder();

    /** Where apps usually keep a tracepoint; never closed, like theirs. */
    static final Tracepoint STATIC_TP = new Provider("bench_static").tracepoint("enabled_check", Field.u32("x"));

    /** Holds an EnableWord as Tracepoint did before it kept the word's address itself. */
    static final class WordHolder {
        final EnableWord word;

        WordHolder(EnableWord word) {
            this.word = word;
        }
    }

    /** The memory under {@link #wordHolder}'s word: the state keeps it reachable, as the word does not. */
    final ByteBuffer wordMemory = ByteBuffer.allocateDirect(4);
    WordHolder wordHolder;

    Provider provider;
    Tracepoint tp;

    @Setup
    public void setUp() {
        provider = new Provider("bench");
        tp = provider.tracepoint("enabled_check", Field.u32("x"));
        wordHolder = new WordHolder(EnableWord.of(wordMemory));
    }

    @TearDown
    public void tearDown() {
        provider.close();
    }

    @Benchmark
    public boolean isEnabled() {
        return tp.isEnabled();
    }

    @Benchmark
    public boolean isEnabledStaticFinal() {
        return STATIC_TP.isEnabled();
    }

    @Benchmark
    public boolean staticFinalHolderVolatileBoolean() {
        return STATIC_HOLDER.flag;
    }

    /** The previous isEnabled() chain: state, object, EnableWord, address, word. */
    @Benchmark
    public boolean enableWordViaHolder() {
        return wordHolder.word.isSet();
    }

    @Benchmark
    public boolean byteBufferViewOpaque() {
        return (int) VIEW_INT.getOpaque(view, 0) != 0;
    }

    @Benchmark
    public boolean staticVolatileBoolean() {
        return flag;
    }

    @Benchmark
    public boolean instanceVolatileBoolean() {
        return holder.flag;
    }

    @Benchmark
    public boolean staticPlainBoolean() {
        return plainFlag;
    }
}

package dev.usertrace.bench;

import dev.usertrace.Usertrace;
import java.nio.ByteBuffer;

/**
 * The baseline of the emit benchmark: an event registered by hand, and one
 * JNI call per event that does a single {@code writev} of bytes already laid
 * out in the kernel's format. Native side: the benchmarks' own library,
 * bindings-java/bench-native/src/raw_writev.rs, never the one users load.
 */
final class RawWritev {
    static {
        BenchNative.load();
        Usertrace.isNativeLoaded(); // the API's library, for address()
    }

    private RawWritev() {}

    static native long open0(String tracefs, String nameArgs);

    /** Returns 0 or the errno. */
    static native int writev0(long handle, long address, int length);

    /**
     * {@link #writev0} with the payload cut at up to four offsets (16 bits
     * each, from the low end; 0 ends them), one iovec a piece: the core's
     * layout of the same bytes. Returns 0 or the errno.
     */
    static native int writevCut0(long handle, long address, int length, long cuts);

    /** A JNI call with {@link #writev0}'s arguments that does nothing. */
    static native int nothing0(long handle, long address, int length);

    static native void close0(long handle);

    static long address(ByteBuffer direct) {
        return dev.usertrace.internal.Native.bufferAddress0(direct);
    }
}

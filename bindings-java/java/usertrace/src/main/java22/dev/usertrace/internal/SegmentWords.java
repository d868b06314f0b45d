package dev.usertrace.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The {@link EnableWord.Route#SEGMENT} read (JDK 22+; the multi-release
 * jar's {@code META-INF/versions/22}): every enable word read through one
 * {@code static final} segment that spans the whole address space, at the
 * word's own address as the offset.
 *
 * <p>Why one segment for every word: C2 folds a {@code static final}
 * segment and the JDK's final fields inside it (its base, its length, its
 * global scope, which is never closed), so a read is the bounds check of
 * the offset and the load, with no object loaded first. A segment per word
 * (or a ByteBuffer view, the route before) is an object the tracepoint must
 * load, then check, on every read.
 *
 * <p>Why no warning: {@code reinterpret} is a restricted method, which needs
 * native access, as JNI's {@code System.load} does (JEP 472). The segment is
 * made only once the JNI library has loaded: then the module has native
 * access already ({@code --enable-native-access}, or the one warning JNI's
 * load printed, after which the JDK grants it), and this prints nothing more.
 * Without the library there is no native word to read, and without native
 * access {@code reinterpret} throws: either way the route is not taken.
 *
 * <p>Memory safety: the segment checks nothing about what lives at an
 * address, as Unsafe does not. Only addresses of live words are read:
 * {@code Tracepoint} reads its own word's address while it keeps the
 * {@code EnableWord} that owns the word reachable, and the word is freed
 * only once that is unreachable (see {@code Tracepoint}).
 */
final class SegmentWords {
    /** Every address, at offset = address; null when the route is not taken. */
    private static final MemorySegment ALL;
    /** Why not, or null. */
    private static final String UNAVAILABLE;
    /** An {@code int} at (segment, offset): JAVA_INT is 4-aligned, as the word is. */
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    static {
        MemorySegment all = null;
        String why = null;
        if (!Native.isLoaded()) {
            why = "the JNI library did not load, so there is no native word";
        } else if (!SegmentWords.class.getModule().isNativeAccessEnabled()) {
            why = "no native access for " + SegmentWords.class.getModule();
        } else {
            try {
                all = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
            } catch (RuntimeException e) {
                why = "MemorySegment.reinterpret refused: " + e;
            }
        }
        ALL = all;
        UNAVAILABLE = why;
    }

    private SegmentWords() {}

    /** Why the segment route is not taken, or null if it can be. */
    static String unavailable() {
        return UNAVAILABLE;
    }

    /**
     * The word at {@code address}, loaded on each call (opaque: never hoisted
     * out of a loop, and a plain {@code mov} on x86-64). The caller keeps the
     * word alive across the call.
     */
    static int read(long address) {
        return (int) INT.getOpaque(ALL, address);
    }
}

package dev.usertrace.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The 4-byte word the kernel writes while a tracer listens, read in place
 * with no JNI call. Not API: {@code Tracepoint} holds one in a final field
 * and, on {@link Route#UNSAFE} and {@link Route#SEGMENT}, its {@link #address()} in another, which it
 * reads with {@link #isSetAt}: one field load fewer per read.
 *
 * <h2>Routes</h2>
 * One is chosen per JVM, when this class initializes ({@link #route()}):
 * <ul>
 * <li>{@link Route#UNSAFE} (JDK 17 to 23): {@code sun.misc.Unsafe.getIntVolatile(null, address)}
 *     on the raw address: nothing to check, so once compiled it is one load
 *     ({@code mov} on x86-64), as fast as a volatile field of an object.
 * <li>{@link Route#SEGMENT} (JDK 24+, with the JNI library loaded): an opaque
 *     read through one {@code static final} MemorySegment that spans every
 *     address, at the word's address ({@code SegmentWords}, in the
 *     multi-release jar's JDK 22 classes). JDK 24 made Unsafe's memory
 *     access print a warning by default (JEP 498; JDK 23's JEP 471 only
 *     deprecated it); this needs the native access that JNI needs anyway, and
 *     prints nothing more. C2 folds the constant segment: what is left is a
 *     bounds check and the load.
 * <li>{@link Route#BUFFER} (what is left: no library, so only the zero word,
 *     or no native access, or a jlink image without jdk.unsupported on JDK
 *     17 to 23): an opaque VarHandle read of a direct ByteBuffer view of the
 *     word, with bounds, alignment and scope checks on every read (3 to 4x a
 *     volatile field in BENCHMARKS.md).
 * </ul>
 *
 * <h2>Volatile, or opaque</h2>
 * A plain read may be hoisted out of a loop, which would then never see a
 * tracer attach. Opaque (and Unsafe's volatile, which sun.misc.Unsafe offers
 * instead) forces a real load on each call; on x86-64 both are a plain
 * {@code mov}. The kernel publishes nothing else with the bit, so no stronger
 * ordering is needed; the native emit checks the word again itself.
 *
 * <h2>Lifetime</h2>
 * The word lives in native memory that this object does not own. Whoever
 * makes one from a native word must free that memory only once this object
 * is unreachable ({@code Tracepoint} registers its Cleaner on it), since
 * {@link #isSet()} reads the address with no check at all. It fences
 * {@code this} after the read, so the object stays reachable until the load
 * is done; a caller of {@link #isSetAt} must fence an object that holds this
 * one instead.
 */
public final class EnableWord {
    /** How {@link #isSet()} reads the word; see the class comment. */
    public enum Route {
        UNSAFE,
        SEGMENT,
        BUFFER,
    }

    private static final Route ROUTE;
    /** The Unsafe instance, for {@link Route#UNSAFE} only. */
    private static final sun.misc.Unsafe UNSAFE;
    /** The ByteBuffer view's int, for {@link Route#BUFFER}. */
    private static final VarHandle BUFFER_INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    static {
        sun.misc.Unsafe unsafe = null;
        if (Runtime.version().feature() < 24) {
            try {
                Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                f.setAccessible(true);
                unsafe = (sun.misc.Unsafe) f.get(null);
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                unsafe = null; // no jdk.unsupported: another route
            }
        }
        UNSAFE = unsafe;
        if (unsafe != null) {
            ROUTE = Route.UNSAFE;
        } else if (Runtime.version().feature() >= 24 && SegmentWords.unavailable() == null) {
            // Only from 24 on, where Unsafe warns: before, the segment would
            // make a JVM without --enable-native-access warn, and Unsafe does not.
            ROUTE = Route.SEGMENT;
        } else {
            ROUTE = Route.BUFFER;
        }
    }

    /** The zero word's memory off the Unsafe route: held here, so never freed. */
    private static final ByteBuffer ZERO_MEMORY = ByteBuffer.allocateDirect(8);
    private static final EnableWord ZERO = zeroWord();

    /** The word's address, for {@link Route#UNSAFE} and {@link Route#SEGMENT}. */
    private final long address;
    /** The word's view, for {@link Route#BUFFER}. */
    private final ByteBuffer view;

    private EnableWord(long address, ByteBuffer view) {
        this.address = address;
        this.view = view;
    }

    /** The route this JVM reads words through. */
    public static Route route() {
        return ROUTE;
    }

    /**
     * The word that {@code view} (a direct buffer of at least 4 bytes, 4-aligned,
     * e.g. from {@link Native#enableWord0}) covers. For the address routes
     * its address comes from JNI ({@link Native#bufferAddress0}), since
     * {@code sun.nio.ch.DirectBuffer} is not exported (the SEGMENT route is
     * only taken with the library loaded).
     */
    public static EnableWord of(ByteBuffer view) {
        if (!view.isDirect() || view.capacity() < 4) {
            throw new IllegalArgumentException("an enable word needs a direct buffer of 4 bytes: " + view);
        }
        if (ROUTE != Route.BUFFER) {
            long address = Native.bufferAddress0(view);
            if (address == 0 || (address & 3) != 0) {
                throw new IllegalArgumentException("enable word at unaligned address 0x" + Long.toHexString(address));
            }
            return new EnableWord(address, null);
        }
        return new EnableWord(0, view);
    }

    /** A word that is always 0, for tracepoints without a native object (no library). */
    public static EnableWord zero() {
        return ZERO;
    }

    /**
     * The word's address, for {@link #isSetAt}; 0 on {@link Route#BUFFER}.
     * Valid only while this object is reachable: whoever copies it must keep
     * this object reachable across each read (as {@code Tracepoint}, which
     * holds both in final fields, does by fencing itself).
     */
    public long address() {
        return address;
    }

    /**
     * {@link #isSet()} of the word at {@code address} ({@link Route#UNSAFE}
     * and {@link Route#SEGMENT} only): lets a holder read with one field load,
     * not two. The caller must keep the {@code EnableWord} of that address
     * reachable until this returns.
     */
    public static boolean isSetAt(long address) {
        // ROUTE is a constant once compiled: one branch is compiled in.
        int word = ROUTE == Route.UNSAFE ? UNSAFE.getIntVolatile(null, address) : SegmentWords.read(address);
        return word != 0;
    }

    /** Whether the kernel set the word: one load, a real one on each call. */
    public boolean isSet() {
        boolean set;
        if (ROUTE == Route.BUFFER) {
            set = (int) BUFFER_INT.getOpaque(view, 0) != 0;
        } else {
            set = isSetAt(address);
        }
        // The owner frees the word once this object is unreachable: keep it
        // reachable until the load above is done.
        Reference.reachabilityFence(this);
        return set;
    }

    /**
     * A zero word that is never freed. Unsafe route: 4 bytes of its own, as
     * no direct buffer's address can be had without JNI, which may be the
     * very thing that did not load. Otherwise a direct buffer that this
     * class holds for good (the SEGMENT route reads it by address).
     */
    private static EnableWord zeroWord() {
        if (ROUTE == Route.UNSAFE) {
            long address = UNSAFE.allocateMemory(4);
            UNSAFE.putInt(address, 0);
            return new EnableWord(address, null);
        }
        return of(ZERO_MEMORY);
    }
}

package dev.usertrace.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The 4-byte word the kernel writes while a tracer listens, read in place
 * with no JNI call. Not API: {@code Tracepoint} holds one in a final field.
 *
 * <h2>Routes</h2>
 * One is chosen per JVM, when this class initializes ({@link #route()}):
 * <ul>
 * <li>{@link Route#UNSAFE} (JDK 17 to 21): {@code sun.misc.Unsafe.getIntVolatile(null, address)}
 *     on the raw address: nothing to check, so once compiled it is one load
 *     ({@code mov} on x86-64). A ByteBuffer view keeps bounds, alignment and
 *     scope checks on every read, measured at about 6x a static volatile read.
 * <li>{@link Route#SEGMENT} (JDK 22+): an opaque read through
 *     {@code MemorySegment.ofBuffer(view)} and {@code ValueLayout.JAVA_INT}.
 *     From JDK 24 on, Unsafe's memory access prints a warning (JEP 471, 498);
 *     {@code ofBuffer} is not a restricted method, so this prints nothing and
 *     needs no {@code --enable-native-access}. It is reached through method
 *     handles, so that this jar still compiles for, and runs on, JDK 17: no
 *     multi-release jar, and no second compiler in the build.
 * <li>{@link Route#BUFFER}: where Unsafe is missing (a jlink image without
 *     jdk.unsupported), the opaque ByteBuffer view read of earlier versions:
 *     slower, but still no JNI call.
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
 * is done.
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
    /** {@code (Object segment, long offset) -> int}: an opaque int read, for {@link Route#SEGMENT}. */
    private static final MethodHandle SEGMENT_GET;
    /** {@code (ByteBuffer) -> Object}: {@code MemorySegment.ofBuffer}, for {@link Route#SEGMENT}. */
    private static final MethodHandle OF_BUFFER;
    /** The ByteBuffer view's int, for {@link Route#BUFFER}. */
    private static final VarHandle BUFFER_INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    static {
        Route route = Route.BUFFER;
        sun.misc.Unsafe unsafe = null;
        MethodHandle get = null;
        MethodHandle ofBuffer = null;
        if (Runtime.version().feature() >= 22) {
            try {
                Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
                // Through the public interface: the layout's own class is not exported.
                Class<?> valueLayout = Class.forName("java.lang.foreign.ValueLayout");
                Object javaInt = valueLayout.getField("JAVA_INT").get(null);
                VarHandle vh = (VarHandle) valueLayout.getMethod("varHandle").invoke(javaInt);
                get = vh.toMethodHandle(VarHandle.AccessMode.GET_OPAQUE)
                        .asType(MethodType.methodType(int.class, Object.class, long.class));
                ofBuffer = MethodHandles.publicLookup()
                        .findStatic(segment, "ofBuffer", MethodType.methodType(segment, Buffer.class))
                        .asType(MethodType.methodType(Object.class, ByteBuffer.class));
                route = Route.SEGMENT;
            } catch (ReflectiveOperationException | RuntimeException e) {
                get = null;
                ofBuffer = null;
            }
        } else {
            try {
                Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                f.setAccessible(true);
                unsafe = (sun.misc.Unsafe) f.get(null);
                route = Route.UNSAFE;
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                unsafe = null;
            }
        }
        ROUTE = route;
        UNSAFE = unsafe;
        SEGMENT_GET = get;
        OF_BUFFER = ofBuffer;
    }

    private static final EnableWord ZERO = zeroWord();

    /** The word's address, for {@link Route#UNSAFE}. */
    private final long address;
    /** The MemorySegment ({@link Route#SEGMENT}) or ByteBuffer ({@link Route#BUFFER}) read. */
    private final Object view;

    private EnableWord(long address, Object view) {
        this.address = address;
        this.view = view;
    }

    /** The route this JVM reads words through. */
    public static Route route() {
        return ROUTE;
    }

    /**
     * The word that {@code view} (a direct buffer of at least 4 bytes, 4-aligned,
     * e.g. from {@link Native#enableWord0}) covers. For the Unsafe route its
     * address comes from JNI ({@link Native#bufferAddress0}), since
     * {@code sun.nio.ch.DirectBuffer} is not exported.
     */
    public static EnableWord of(ByteBuffer view) {
        if (!view.isDirect() || view.capacity() < 4) {
            throw new IllegalArgumentException("an enable word needs a direct buffer of 4 bytes: " + view);
        }
        switch (ROUTE) {
            case UNSAFE:
                long address = Native.bufferAddress0(view);
                if (address == 0 || (address & 3) != 0) {
                    throw new IllegalArgumentException("enable word at unaligned address 0x" + Long.toHexString(address));
                }
                return new EnableWord(address, null);
            case SEGMENT:
                try {
                    return new EnableWord(0, OF_BUFFER.invokeExact(view));
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable t) {
                    throw new AssertionError(t); // ofBuffer declares no checked exception
                }
            default:
                return new EnableWord(0, view);
        }
    }

    /** A word that is always 0, for tracepoints without a native object (no library). */
    public static EnableWord zero() {
        return ZERO;
    }

    /** Whether the kernel set the word: one load, a real one on each call. */
    public boolean isSet() {
        int word;
        if (ROUTE == Route.UNSAFE) {
            word = UNSAFE.getIntVolatile(null, address);
        } else if (ROUTE == Route.SEGMENT) {
            try {
                word = (int) SEGMENT_GET.invokeExact(view, 0L);
            } catch (Throwable t) {
                throw new AssertionError(t); // 4 aligned bytes of a buffer's segment, never closed: cannot fail
            }
        } else {
            word = (int) BUFFER_INT.getOpaque((ByteBuffer) view, 0);
        }
        // The owner frees the word once this object is unreachable: keep it
        // reachable until the load above is done.
        Reference.reachabilityFence(this);
        return word != 0;
    }

    /**
     * A zero word that is never freed. Unsafe route: 4 bytes of its own, as
     * no direct buffer's address can be had without JNI, which may be the
     * very thing that did not load.
     */
    private static EnableWord zeroWord() {
        if (ROUTE == Route.UNSAFE) {
            long address = UNSAFE.allocateMemory(4);
            UNSAFE.putInt(address, 0);
            return new EnableWord(address, null);
        }
        return of(ByteBuffer.allocateDirect(4));
    }
}

package dev.usertrace.internal;

import java.nio.ByteBuffer;

/**
 * The native methods of the JNI library ({@code bindings-java/src/}). Not API:
 * the public classes validate arguments, then call these, which throw
 * {@code UsertraceException} (with the shared error code) on failure.
 *
 * <p>A handle is the address of a Rust {@code DynamicTracepoint}; see
 * {@code Tracepoint} for who frees it, and when.
 */
public final class Native {
    /** Must equal the library's {@code ABI_VERSION}; checked at load. */
    static final int ABI_VERSION = 2;

    private static final Throwable LOAD_ERROR = NativeLoader.load();

    private Native() {}

    /** Whether the library loaded; if not, usertrace is a no-op (see {@link #loadError()}). */
    public static boolean isLoaded() {
        return LOAD_ERROR == null;
    }

    /** Why the library did not load (naming every place searched), or null. */
    public static Throwable loadError() {
        return LOAD_ERROR;
    }

    static native int abiVersion0();

    /** {@code "<availability code>\t<message>"}. */
    public static native String status0();

    /** Throws {@code UsertraceException} (INVALID_NAME) unless {@code name} is a valid {@code what} name. */
    public static native void checkName0(String what, String name);

    /**
     * Checks the definition {@code <provider>_<event>} (names, field count and
     * types, {@code char[N]} bounds, format length) and makes the native
     * tracepoint, unregistered. Types are {@code FieldType} codes; lengths the
     * N of each {@code char[N]}, else 0.
     */
    public static native long create0(String provider, String event, String[] fieldNames, int[] fieldTypes,
            int[] fieldLengths, boolean multiFormat, boolean persist);

    public static native void register0(long handle);

    public static native void unregister0(long handle);

    public static native boolean isRegistered0(long handle);

    /** A view of the 4-byte enable word; valid until {@link #free0(long)}. */
    public static native ByteBuffer enableWord0(long handle);

    public static native long bufferAddress0(ByteBuffer directBuffer);

    /** Emits the {@code length} encoded bytes at {@code address} (see EventWriter). */
    public static native void emit0(long handle, long address, int length);

    /** Checks the encoded values as an emit would, enabled or not; writes nothing. */
    public static native void validate0(long handle, long address, int length);

    /** Unregisters if needed and frees; exactly once per handle. */
    public static native void free0(long handle);

    /** The core's field types: {@code "<code>\t<declared name>\t<name in messages>"}, in code order. */
    public static native String[] fieldTypes0();

    /** The core's error kinds: {@code "<code>\t<NAME>"}, in code order. */
    public static native String[] errorKinds0();

    /** The core's availabilities: {@code "<code>\t<name>"}, in code order. */
    public static native String[] availabilities0();
}

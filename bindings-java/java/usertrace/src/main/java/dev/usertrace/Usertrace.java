package dev.usertrace;

import dev.usertrace.internal.Native;

/**
 * Process-wide facts: whether tracing can work here, and why not.
 *
 * <p>usertrace never fails an application for lack of tracing: without
 * user_events (or without the native library, or off Linux) tracepoints are
 * created, stay disabled, and emit nothing. {@link Tracepoint#registrationError()}
 * and {@link #status()} say why; {@link Tracepoint#register()} retries and throws.
 */
public final class Usertrace {
    private Usertrace() {}

    /** Probes tracefs and {@code user_events_data} now (never cached). */
    public static Status status() {
        if (!Native.isLoaded()) {
            return new Status(Availability.NATIVE_LIBRARY_UNAVAILABLE, Native.loadError().getMessage());
        }
        String s = Native.status0();
        int tab = s.indexOf('\t');
        Availability a = Availability.of(Integer.parseInt(s.substring(0, tab)));
        return new Status(a, s.substring(tab + 1));
    }

    /** Whether the native library loaded. */
    public static boolean isNativeLoaded() {
        return Native.isLoaded();
    }

    /** Why the native library did not load, naming every place searched; null if it did. */
    public static Throwable nativeLoadError() {
        return Native.loadError();
    }
}

package dev.usertrace;

import dev.usertrace.internal.Native;

/**
 * Process-wide facts: which way events leave this process, whether user_events
 * can be used here, and why not.
 *
 * <p>Where the kernel has no user_events, events go through shared memory
 * instead, which {@code usertrace record} reads: {@link #transport()} says
 * which way they go. usertrace never fails an application for lack of
 * tracing: where neither works (user_events that may not be opened, no native
 * library, not Linux) tracepoints are created, stay disabled, and emit nothing.
 * {@link Tracepoint#registrationError()} and {@link #status()} say why;
 * {@link Tracepoint#register()} retries and throws.
 */
public final class Usertrace {
    private Usertrace() {}

    /**
     * Probes tracefs and {@code user_events_data} now (never cached), and when
     * that cannot tell why there are no user_events, reads the kernel's build
     * config: the core's verdict, word for word what {@code usertrace status} says.
     *
     * <p>This is about user_events only. Where the kernel has none, events still
     * reach {@code usertrace record} through shared memory: {@link #transport()}
     * says which way this process's events go, and so whether they will reach a recorder.
     */
    public static Status status() {
        if (!Native.isLoaded()) {
            return new Status(Availability.NATIVE_LIBRARY_UNAVAILABLE, Native.loadError().getMessage());
        }
        String s = Native.status0();
        int tab = s.indexOf('\t');
        Availability a = Availability.of(Integer.parseInt(s.substring(0, tab)));
        return new Status(a, s.substring(tab + 1));
    }

    /**
     * The transport this process's tracepoints use (or the next one registered
     * would), and why, as the core decides it. {@code USERTRACE_TRANSPORT} (read
     * once per process) picks it: {@code user_events} or {@code shm} forces one;
     * {@code auto} (or unset) takes user_events where {@link #status()} finds
     * them usable, and shared memory where the kernel has none (its build
     * config lacks CONFIG_USER_EVENTS, no tracefs, or no {@code user_events_data}),
     * giving {@link #status()}'s verdict as the reason. Once a tracepoint registered, the process keeps
     * its transport.
     *
     * @throws UsertraceException of kind {@link ErrorKind#UNAVAILABLE} if
     *     {@code USERTRACE_TRANSPORT} holds anything else (then nothing
     *     registers), or if the native library did not load (then no transport
     *     carries events; the cause says why)
     */
    public static TransportChoice transport() {
        if (!Native.isLoaded()) {
            throw new UsertraceException(ErrorKind.UNAVAILABLE,
                    "usertrace: no transport, the native library did not load: " + Native.loadError().getMessage(),
                    Native.loadError());
        }
        String[] t = Native.transport0();
        return new TransportChoice(Transport.ofCoreName(t[0]), t[1], t[2]);
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

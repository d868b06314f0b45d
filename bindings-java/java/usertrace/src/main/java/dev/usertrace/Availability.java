package dev.usertrace;

/**
 * The verdict of {@link Usertrace#status()}. The codes are the core's
 * ({@code usertrace::Availability::code}), which a test holds this enum to;
 * {@link #NATIVE_LIBRARY_UNAVAILABLE} is Java's own.
 */
public enum Availability {
    /** {@code user_events_data} opened for writing: tracepoints will register. */
    AVAILABLE(0),
    /** No tracefs mount point was found, and the kernel's build config does not say it lacks user_events. */
    TRACEFS_NOT_MOUNTED(1),
    /**
     * The kernel lacks user_events: its build config says CONFIG_USER_EVENTS is not
     * set (or it is older than 6.4), or tracefs has no {@code user_events_data}.
     */
    USER_EVENTS_MISSING(2),
    /** {@code user_events_data} exists but this process may not open it. */
    PERMISSION_DENIED(3),
    /** Opening {@code user_events_data} failed for another reason. */
    OPEN_FAILED(4),
    /** The native library could not be loaded (or this is not Linux): usertrace runs as a no-op. */
    NATIVE_LIBRARY_UNAVAILABLE(-1);

    private final int code;

    Availability(int code) {
        this.code = code;
    }

    /** The stable number of this verdict (-1 for {@link #NATIVE_LIBRARY_UNAVAILABLE}, which the core never gives). */
    public int code() {
        return code;
    }

    /** The verdict of {@code code}, or {@link #OPEN_FAILED} for a code this version does not know. */
    public static Availability of(int code) {
        for (Availability a : values()) {
            if (a.code == code) {
                return a;
            }
        }
        return OPEN_FAILED;
    }
}

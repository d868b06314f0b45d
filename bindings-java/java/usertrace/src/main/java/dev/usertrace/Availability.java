package dev.usertrace;

/** The verdict of {@link Usertrace#status()}. */
public enum Availability {
    /** {@code user_events_data} opened for writing: tracepoints will register. */
    AVAILABLE,
    /** No tracefs mount point was found. */
    TRACEFS_NOT_MOUNTED,
    /** tracefs is mounted but the kernel lacks CONFIG_USER_EVENTS (or is older than 6.4). */
    USER_EVENTS_MISSING,
    /** {@code user_events_data} exists but this process may not open it. */
    PERMISSION_DENIED,
    /** Opening {@code user_events_data} failed for another reason. */
    OPEN_FAILED,
    /** The native library could not be loaded (or this is not Linux): usertrace runs as a no-op. */
    NATIVE_LIBRARY_UNAVAILABLE
}

package dev.usertrace;

import java.util.Locale;

/**
 * A way for events to reach a recorder, as {@link Usertrace#transport()}
 * names it. Each constant's name, in lower case, is the core's name for it,
 * the one {@code USERTRACE_TRANSPORT} takes.
 */
public enum Transport {
    /** The kernel's user_events: one {@code writev} into the trace buffers. */
    USER_EVENTS,
    /** Shared memory in {@code /dev/shm}, read by {@code usertrace record}, on any kernel. */
    SHM;

    /** The core's name: {@code user_events} or {@code shm}. */
    public String coreName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The transport the core names {@code name}. */
    static Transport ofCoreName(String name) {
        for (Transport t : values()) {
            if (t.coreName().equals(name)) {
                return t;
            }
        }
        // The library is the one built with this jar (its ABI version is checked at load).
        throw new IllegalStateException("usertrace: the native library named an unknown transport: " + name);
    }
}

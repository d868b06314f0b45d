package dev.usertrace;

/**
 * The transport this process's events take, and why: what {@link Usertrace#transport()} found.
 *
 * @param transport the transport
 * @param reason    why, in a sentence: the {@code USERTRACE_TRANSPORT} setting, and for
 *                  {@code auto} what the probe of user_events found
 * @param message   the core's sentence, {@code transport shm: USERTRACE_TRANSPORT=auto: ...}
 */
public record TransportChoice(Transport transport, String reason, String message) {
    @Override
    public String toString() {
        return message;
    }
}

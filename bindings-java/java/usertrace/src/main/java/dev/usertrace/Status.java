package dev.usertrace;

/**
 * Whether tracing is available in this process, and if not, why and what to do.
 *
 * @param availability the verdict
 * @param message      a sentence for people, naming the paths looked at
 */
public record Status(Availability availability, String message) {
    public boolean isAvailable() {
        return availability == Availability.AVAILABLE;
    }

    @Override
    public String toString() {
        return message;
    }
}

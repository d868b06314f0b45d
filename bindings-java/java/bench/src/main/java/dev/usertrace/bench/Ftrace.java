package dev.usertrace.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Turns a user event's ftrace recording on and off, so emits really write. */
final class Ftrace {
    static final Path TRACEFS = Path.of("/sys/kernel/tracing");

    private Ftrace() {}

    static void enable(String event, boolean on) {
        try {
            Files.writeString(TRACEFS.resolve("events/user_events/" + event + "/enable"), on ? "1" : "0");
        } catch (IOException e) {
            throw new IllegalStateException("cannot " + (on ? "enable" : "disable") + " ftrace for " + event
                    + " (the emit benchmarks need root and user_events): " + e, e);
        }
    }
}

package dev.usertrace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/** Test helper: ftrace's view of user events (needs root and user_events). */
final class Ftrace {
    static final Path TRACEFS = Path.of("/sys/kernel/tracing");

    private Ftrace() {}

    static void enable(String event, boolean on) throws IOException {
        Files.writeString(TRACEFS.resolve("events/user_events/" + event + "/enable"), on ? "1" : "0");
    }

    static void clear() throws IOException {
        Files.writeString(TRACEFS.resolve("trace"), "");
    }

    /** The lines of the trace buffer that show {@code event}, payload only (after "event: "). */
    static List<String> lines(String event) throws IOException {
        String marker = " " + event + ": ";
        // Lenient UTF-8: byte fields print as raw bytes.
        String text = new String(Files.readAllBytes(TRACEFS.resolve("trace")), java.nio.charset.StandardCharsets.UTF_8);
        return text.lines()
                .filter(l -> l.contains(marker))
                .map(l -> l.substring(l.indexOf(marker) + marker.length()))
                .collect(Collectors.toList());
    }

    static String format(String event) throws IOException {
        return Files.readString(TRACEFS.resolve("events/user_events/" + event + "/format"));
    }
}

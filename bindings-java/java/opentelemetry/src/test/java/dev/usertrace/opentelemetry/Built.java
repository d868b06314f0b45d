package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/** A file the build made, named by a system property the pom sets for the *IT tests. */
final class Built {
    private Built() {}

    /** The file, or a failure saying what it is and how it is made. */
    static Path file(String property, String what) {
        String path = System.getProperty(property);
        assertTrue(path != null && Files.isRegularFile(Path.of(path)), "no " + what + ": -D" + property + "=" + path);
        return Path.of(path);
    }
}

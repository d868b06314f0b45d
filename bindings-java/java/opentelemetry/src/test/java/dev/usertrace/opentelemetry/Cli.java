package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/** The usertrace CLI the recorder tests record with: {@code -Dusertrace.cli}, as run-tests.sh passes. */
final class Cli {
    private Cli() {}

    static Path path() {
        String cli = System.getProperty("usertrace.cli");
        assertTrue(cli != null && Files.isExecutable(Path.of(cli)),
                "set -Dusertrace.cli to the usertrace CLI (cargo build -p usertrace-cli); got " + cli);
        return Path.of(cli);
    }

    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}

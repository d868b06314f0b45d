package dev.usertrace.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * What a process printed, stdout and stderr as they came, once it has
 * exited 0. The output goes to a file, not a pipe: a run that never ends
 * fails after the timeout, with what it printed, instead of holding the test
 * in a read.
 */
public final class ProcessConsole {
    private ProcessConsole() {}

    /**
     * Fails if the process runs over 300 s ({@code what} names it in the
     * message) or exits non-zero. {@code tempPrefix} begins the name of the
     * file its output goes to (removed when it ends), e.g.
     * {@code usertrace-log4j2-noop}: a file left by a killed run says which
     * module's test made it.
     */
    public static String of(ProcessBuilder process, String what, String tempPrefix) throws Exception {
        Path log = Files.createTempFile(tempPrefix, ".log");
        try {
            Process p = process.redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean exited = p.waitFor(300, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
            String console = Files.readString(log);
            assertTrue(exited, what + " did not exit within 300 s: " + console);
            assertEquals(0, p.exitValue(), console);
            return console;
        } finally {
            Files.deleteIfExists(log);
        }
    }
}

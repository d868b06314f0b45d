package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Test helper: runs a class's main in a new JVM on this test's class path, and keeps what it printed. */
final class ChildJvm {
    final String out;
    final String err;

    private ChildJvm(String out, String err) {
        this.out = out;
        this.err = err;
    }

    /** The java launcher of the JVM running the tests. */
    static Path thisJava() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /** Runs {@code main} under {@code java}; fails the test unless it exits 0 within 300 s. */
    static ChildJvm run(Path java, Class<?> main, String... jvmArgs) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.addAll(List.of(jvmArgs));
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        // Files, not pipes: a JVM that hangs fails the test at the timeout.
        Path out = Files.createTempFile("usertrace-child", ".out");
        Path err = Files.createTempFile("usertrace-child", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            boolean exited = p.waitFor(300, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
            ChildJvm r = new ChildJvm(Files.readString(out), Files.readString(err));
            assertTrue(exited, "did not exit within 300 s: " + r.out + r.err);
            assertEquals(0, p.exitValue(), r.out + r.err);
            return r;
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}

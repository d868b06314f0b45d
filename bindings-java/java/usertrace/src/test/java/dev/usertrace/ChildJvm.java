package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Test helper: runs a class's main in a new JVM on this test's class path,
 * and keeps what it printed; under this JDK, or the newest JDK 24+ found:
 * {@code -Dusertrace.java24=JAVA_HOME}, {@code $USERTRACE_JAVA24_HOME}, else
 * the newest in /usr/lib/jvm.
 */
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
        return run(java, env -> {}, main, jvmArgs);
    }

    /** {@link #run(Path, Class, String...)} with {@code environment} applied to the child's environment. */
    static ChildJvm run(Path java, Consumer<Map<String, String>> environment, Class<?> main, String... jvmArgs)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.addAll(List.of(jvmArgs));
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        cmd.add("-cp");
        cmd.add(multiRelease(System.getProperty("java.class.path"), feature(java.getParent().getParent())));
        cmd.add(main.getName());
        // Files, not pipes: a JVM that hangs fails the test at the timeout.
        Path out = Files.createTempFile("usertrace-child", ".out");
        Path err = Files.createTempFile("usertrace-child", ".err");
        try {
            ProcessBuilder builder = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
            environment.accept(builder.environment());
            Process p = builder.start();
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

    /**
     * {@code classPath} as a JDK {@code feature} would see it were its class
     * folders multi-release jars: each folder's {@code META-INF/versions/N},
     * for N up to {@code feature}, highest first, ahead of the folder itself.
     * Maven's tests run on target/classes, a folder, where the JVM ignores the
     * versioned classes (the JDK 22+ {@code internal.SegmentWords}) that the
     * jar serves.
     */
    static String multiRelease(String classPath, int feature) {
        List<String> out = new ArrayList<>();
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            Path versions = Path.of(entry, "META-INF", "versions");
            if (Files.isDirectory(versions)) {
                for (int n = feature; n >= 9; n--) {
                    if (Files.isDirectory(versions.resolve(Integer.toString(n)))) {
                        out.add(versions.resolve(Integer.toString(n)).toString());
                    }
                }
            }
            out.add(entry);
        }
        return String.join(java.io.File.pathSeparator, out);
    }

    /** The java launcher of a JDK 24+, or the test is skipped. */
    static Path java24() throws IOException {
        String home = System.getProperty("usertrace.java24", System.getenv("USERTRACE_JAVA24_HOME"));
        Optional<Path> found;
        if (home != null && !home.isEmpty()) {
            assertTrue(feature(Path.of(home)) >= 24, home + " is not a JDK 24 or later");
            found = Optional.of(Path.of(home));
        } else if (Files.isDirectory(Path.of("/usr/lib/jvm"))) {
            try (Stream<Path> homes = Files.list(Path.of("/usr/lib/jvm"))) {
                found = homes.filter(h -> feature(h) >= 24).max(Comparator.comparingInt(h -> feature(h)));
            }
        } else {
            found = Optional.empty();
        }
        assumeTrue(found.isPresent(), "no JDK 24 or later: set -Dusertrace.java24 or USERTRACE_JAVA24_HOME");
        return found.get().resolve("bin/java");
    }

    /** The feature version in {@code home/release}, or 0. */
    static int feature(Path home) {
        try {
            for (String line : Files.readAllLines(home.resolve("release"))) {
                if (line.startsWith("JAVA_VERSION=\"")) {
                    String v = line.substring("JAVA_VERSION=\"".length());
                    int end = 0;
                    while (end < v.length() && Character.isDigit(v.charAt(end))) {
                        end++;
                    }
                    return Files.isExecutable(home.resolve("bin/java")) && end > 0 ? Integer.parseInt(v.substring(0, end)) : 0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }
}

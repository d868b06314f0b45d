package dev.usertrace.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;

/**
 * Loads the benchmarks' own JNI library, {@code libusertrace_bench_jni.so}
 * (bindings-java/bench-native/): the file named by {@value #PATH_PROPERTY},
 * else the copy in this jar, extracted as the API's loader does (a 0700
 * folder, a 0600 file written through the descriptor that created it, both
 * deleted once loaded). The library users load carries none of it.
 */
final class BenchNative {
    static final String PATH_PROPERTY = "usertrace.bench.native.path";
    static final String LIBRARY = "usertrace_bench_jni";

    private BenchNative() {}

    /** Loads the library, or throws an {@code UnsatisfiedLinkError} naming where it looked. */
    static void load() {
        String path = System.getProperty(PATH_PROPERTY);
        if (path != null) {
            System.load(Path.of(path).toAbsolutePath().toString());
            return;
        }
        String resource = "/dev/usertrace/bench/native/linux-" + arch() + "/lib" + LIBRARY + ".so";
        try (InputStream in = BenchNative.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("usertrace bench: the jar has no " + resource
                        + " (built by build-native.sh CLASSES_DIR bench); set -D" + PATH_PROPERTY + " to choose one");
            }
            Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
            Path dir = Files.createTempDirectory(tmp, "lib" + LIBRARY + "-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path file = dir.resolve("lib" + LIBRARY + ".so");
            try {
                try (OutputStream out = Channels.newOutputStream(Files.newByteChannel(file,
                        EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))))) {
                    in.transferTo(out);
                }
                System.load(file.toString());
            } finally {
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("usertrace bench: cannot extract " + resource, e);
        }
    }

    private static String arch() {
        String arch = System.getProperty("os.arch", "?");
        switch (arch) {
            case "amd64": case "x86_64": return "x86_64";
            case "aarch64": case "arm64": return "aarch64";
            default: return arch;
        }
    }
}

package dev.usertrace.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads the JNI library, trying in order:
 * <ol>
 * <li>the file named by the system property {@value #PATH_PROPERTY} (and
 *     nothing else when it is set: a wrong path is an error, not a fallback);</li>
 * <li>{@code System.loadLibrary("usertrace_jni")}, i.e. {@code java.library.path};</li>
 * <li>the copy inside the jar, {@code dev/usertrace/native/<os>-<arch>/libusertrace_jni.so},
 *     extracted to {@code java.io.tmpdir} (or {@value #TMPDIR_PROPERTY}) under a
 *     versioned name, loaded, and deleted (Linux keeps a loaded file mapped).</li>
 * </ol>
 * Returns null on success, else an error naming everything tried.
 */
final class NativeLoader {
    static final String PATH_PROPERTY = "usertrace.native.path";
    static final String TMPDIR_PROPERTY = "usertrace.native.tmpdir";
    static final String LIBRARY = "usertrace_jni";

    private NativeLoader() {}

    static Throwable load() {
        List<String> tried = new ArrayList<>();
        try {
            String path = System.getProperty(PATH_PROPERTY);
            if (path != null) {
                tried.add("-D" + PATH_PROPERTY + "=" + path);
                System.load(Path.of(path).toAbsolutePath().toString());
                return checkVersion(path);
            }
            String os = System.getProperty("os.name", "?");
            if (!os.toLowerCase(Locale.ROOT).startsWith("linux")) {
                return new UnsatisfiedLinkError("usertrace needs Linux (user_events); this is " + os
                        + ": tracepoints are disabled no-ops");
            }
            try {
                System.loadLibrary(LIBRARY);
                return checkVersion("lib" + LIBRARY + ".so on java.library.path");
            } catch (UnsatisfiedLinkError e) {
                tried.add("System.loadLibrary(\"" + LIBRARY + "\") on java.library.path="
                        + System.getProperty("java.library.path") + ": " + e.getMessage());
            }
            String resource = "/dev/usertrace/native/linux-" + arch() + "/lib" + LIBRARY + ".so";
            tried.add("the jar's " + resource);
            try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
                if (in == null) {
                    return error(tried, "the jar has no library for linux-" + arch(), null);
                }
                Path dir = Path.of(System.getProperty(TMPDIR_PROPERTY, System.getProperty("java.io.tmpdir")));
                Path file = Files.createTempFile(dir, "lib" + LIBRARY + "-" + version() + "-", ".so");
                try {
                    Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                    System.load(file.toString());
                } finally {
                    Files.deleteIfExists(file);
                }
                return checkVersion(resource);
            }
        } catch (UnsatisfiedLinkError | IOException | SecurityException | IllegalCallerException e) {
            // IllegalCallerException: JDK 24+ run with --illegal-native-access=deny
            // (JEP 472) and no native access for this module: a no-op, like no library.
            return error(tried, e.toString(), e);
        }
    }

    private static Throwable checkVersion(String where) {
        int abi = Native.abiVersion0();
        if (abi != Native.ABI_VERSION) {
            return new UnsatisfiedLinkError("usertrace: the native library from " + where + " has ABI version " + abi
                    + " but this jar needs " + Native.ABI_VERSION + ": use the library built with this jar");
        }
        return null;
    }

    private static Throwable error(List<String> tried, String why, Throwable cause) {
        UnsatisfiedLinkError e = new UnsatisfiedLinkError("usertrace: cannot load the native library (" + why
                + "); tried: " + String.join("; ", tried) + ". Tracepoints are disabled no-ops; set -D"
                + PATH_PROPERTY + "=/path/to/lib" + LIBRARY + ".so to choose one");
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    static String arch() {
        String arch = System.getProperty("os.arch", "?");
        switch (arch) {
            case "amd64": case "x86_64": return "x86_64";
            case "aarch64": case "arm64": return "aarch64";
            default: return arch;
        }
    }

    static String version() {
        Properties p = new Properties();
        try (InputStream in = NativeLoader.class.getResourceAsStream("/dev/usertrace/usertrace.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException ignored) {
            // The version only names the extracted file.
        }
        return p.getProperty("version", "unknown");
    }
}

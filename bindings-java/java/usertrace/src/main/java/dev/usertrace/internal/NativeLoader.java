package dev.usertrace.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

/**
 * Loads the JNI library, trying in order:
 * <ol>
 * <li>the file named by the system property {@value #PATH_PROPERTY} (and
 *     nothing else when it is set: a wrong path is an error, not a fallback);</li>
 * <li>{@code System.loadLibrary("usertrace_jni")}, i.e. {@code java.library.path};</li>
 * <li>the copy inside the jar, {@code dev/usertrace/native/<os>-<arch>/libusertrace_jni.so},
 *     extracted to a new owner-only folder in {@code java.io.tmpdir} (or
 *     {@value #TMPDIR_PROPERTY}) named for the version (see {@link #extract}),
 *     loaded, and deleted with its folder (Linux keeps a loaded file mapped).</li>
 * </ol>
 * Returns null on success, else an error naming everything tried.
 */
final class NativeLoader {
    static final String PATH_PROPERTY = "usertrace.native.path";
    static final String TMPDIR_PROPERTY = "usertrace.native.tmpdir";
    static final String LIBRARY = "usertrace_jni";
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_FOLDER =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_FILE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

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
                Path file = extract(in, dir);
                try {
                    System.load(file.toString());
                } finally {
                    try {
                        deleteExtracted(file);
                    } catch (IOException leftBehind) {
                        // An owner-only folder left in tmpdir harms nobody; a
                        // library that loaded but is reported as not loaded
                        // (or a load error hidden by this one) would.
                    }
                }
                return checkVersion(resource);
            }
        } catch (UnsatisfiedLinkError | IOException | SecurityException | IllegalCallerException e) {
            // IllegalCallerException: JDK 24+ run with --illegal-native-access=deny
            // (JEP 472) and no native access for this module: a no-op, like no library.
            return error(tried, e.toString(), e);
        }
    }

    /**
     * Writes the library from {@code in} to a new folder in {@code parent},
     * made for it, and returns the file; the caller deletes both. The folder
     * is 0700 and the file 0600 from the moment each is created (the mode is
     * given to mkdir and open, so no umask widens it), and the file is
     * written through the descriptor that created it: nobody else can put
     * another library in its place before {@code System.load} reads it.
     */
    static Path extract(InputStream in, Path parent) throws IOException {
        Path dir = Files.createTempDirectory(parent, "lib" + LIBRARY + "-" + version() + "-", OWNER_ONLY_FOLDER);
        Path file = dir.resolve("lib" + LIBRARY + ".so");
        try (OutputStream out = Channels.newOutputStream(Files.newByteChannel(file,
                EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), OWNER_ONLY_FILE))) {
            in.transferTo(out);
        } catch (IOException | RuntimeException e) {
            try {
                deleteExtracted(file);
            } catch (IOException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        return file;
    }

    /** Deletes what {@link #extract} made: the file, then its folder. */
    static void deleteExtracted(Path file) throws IOException {
        try {
            Files.deleteIfExists(file);
        } finally {
            Files.deleteIfExists(file.getParent());
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

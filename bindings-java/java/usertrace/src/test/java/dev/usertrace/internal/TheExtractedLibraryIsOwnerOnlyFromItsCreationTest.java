package dev.usertrace.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library extracted from the jar is written where no other local user
 * can replace it before {@code System.load}: in a folder made for it, 0700,
 * as a file that is 0600 from its creation, whatever the umask.
 */
class TheExtractedLibraryIsOwnerOnlyFromItsCreationTest {
    static final byte[] LIBRARY = "not really an ELF file, only its bytes".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** Extracts into args[0] and prints the file's and its folder's permissions, then a probe's. */
    static final class ExtractMain {
        public static void main(String[] args) throws IOException {
            Path parent = Path.of(args[0]);
            Path file = NativeLoader.extract(new ByteArrayInputStream(LIBRARY), parent);
            System.out.println("file=" + permissions(file));
            System.out.println("folder=" + permissions(file.getParent()));
            System.out.println("fresh=" + !file.getParent().equals(parent));
            // What a file made with no permissions of its own gets: proves the umask.
            Path probe = Files.createFile(parent.resolve("probe"));
            System.out.println("probe=" + permissions(probe));
        }
    }

    /** Loads the library from the jar (test classes: target/classes) and prints whether it loaded. */
    static final class LoadMain {
        public static void main(String[] args) {
            System.out.println("loaded=" + Native.isLoaded() + " " + Native.loadError());
        }
    }

    static String permissions(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    /** Runs {@code main} in a new JVM under {@code umask 000}; returns what it printed. */
    static String underUmask000(Class<?> main, List<String> jvmArgs, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("sh", "-c", "umask 000 && exec \"$@\"", "sh"));
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    @Test
    void the_file_and_its_own_folder_are_owner_only(@TempDir Path parent) throws IOException {
        Path file = NativeLoader.extract(new ByteArrayInputStream(LIBRARY), parent);
        assertArrayEquals(LIBRARY, Files.readAllBytes(file));
        assertEquals("rw-------", permissions(file), file.toString());
        assertNotEquals(parent, file.getParent(), "the file is not in a folder of its own");
        assertEquals(parent, file.getParent().getParent());
        assertEquals("rwx------", permissions(file.getParent()), file.getParent().toString());
    }

    @Test
    void under_umask_000_neither_the_file_nor_its_folder_is_writable_by_others(@TempDir Path parent) throws Exception {
        String out = underUmask000(ExtractMain.class, List.of(), parent.toString());
        assertTrue(out.contains("probe=rw-rw-rw-\n"), "the child did not run under umask 000: " + out);
        assertTrue(out.contains("file=rw-------\n"), out);
        assertTrue(out.contains("folder=rwx------\n"), out);
        assertTrue(out.contains("fresh=true\n"), out);
    }

    @Test
    void under_umask_000_the_library_loads_and_nothing_is_left_behind(@TempDir Path parent) throws Exception {
        String out = underUmask000(LoadMain.class, List.of("-D" + NativeLoader.TMPDIR_PROPERTY + "=" + parent));
        assertTrue(out.startsWith("loaded=true null"), out);
        try (Stream<Path> left = Files.list(parent)) {
            assertEquals(List.of(), left.toList());
        }
    }
}

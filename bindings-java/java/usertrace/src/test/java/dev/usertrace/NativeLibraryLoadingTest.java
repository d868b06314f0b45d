package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Loading order and the no-op mode, each in a fresh JVM. */
class NativeLibraryLoadingTest {
    static final class StatusMain {
        public static void main(String[] args) {
            System.out.println(Usertrace.status().availability());
            System.out.println(Usertrace.status().message());
            try (Provider p = new Provider("loading")) {
                Tracepoint tp = p.tracepoint("probe", Field.u32("n"));
                tp.emit(1);
                System.out.println("enabled=" + tp.isEnabled());
            }
        }
    }

    static String run(String... jvmArgs) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(jvmArgs));
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(StatusMain.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    @Test
    void the_library_in_the_jar_loads() throws Exception {
        String out = run();
        assertTrue(!out.startsWith("NATIVE_LIBRARY_UNAVAILABLE"), out);
    }

    @Test
    void a_wrong_path_property_is_a_no_op_that_names_the_path() throws Exception {
        String out = run("-Dusertrace.native.path=/nonexistent/libusertrace_jni.so");
        assertTrue(out.startsWith("NATIVE_LIBRARY_UNAVAILABLE"), out);
        assertTrue(out.contains("-Dusertrace.native.path=/nonexistent/libusertrace_jni.so"), out);
        assertTrue(out.contains("enabled=false"), out);
    }

    @Test
    void an_unwritable_extraction_folder_is_a_no_op_that_names_what_was_tried() throws Exception {
        String out = run("-Dusertrace.native.tmpdir=/nonexistent-dir");
        assertTrue(out.startsWith("NATIVE_LIBRARY_UNAVAILABLE"), out);
        assertTrue(out.contains("System.loadLibrary(\"usertrace_jni\")"), out);
        assertTrue(out.contains("/dev/usertrace/native/linux-"), out);
        assertTrue(out.contains("enabled=false"), out);
    }
}

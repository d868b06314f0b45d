package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.internal.EnableWord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On JDK 24+, where sun.misc.Unsafe warns once it reads memory (JEP 498),
 * isEnabled() reads through one constant MemorySegment (the SEGMENT route),
 * whose {@code reinterpret} is restricted as JNI's {@code System.load} is
 * (JEP 472): with the native access JNI needs, stderr stays empty, and
 * without it JNI's one warning is the only one. Runs the newest JDK 24+
 * found: {@code -Dusertrace.java24=JAVA_HOME}, {@code $USERTRACE_JAVA24_HOME},
 * else the newest in /usr/lib/jvm; skipped when there is none.
 */
class OnJdk24AndLaterTheWordIsReadWithNoWarningOfItsOwnTest {
    /** What a JVM prints first for each module that called a restricted method without native access. */
    private static final String RESTRICTED = "WARNING: A restricted method in ";

    /** No JNI library: only the zero word, read through a ByteBuffer view (the BUFFER route). */
    static final class WithoutLibrary {
        public static void main(String[] args) {
            System.out.println("route=" + EnableWord.route());
            Provider p = new Provider("jdk24");
            Tracepoint tp = p.tracepoint("none", Field.u32("n"));
            System.out.println("enabled=" + tp.isEnabled());
            System.out.println("zero=" + EnableWord.zero().isSet());
            ByteBuffer memory = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
            EnableWord word = EnableWord.of(memory);
            boolean before = word.isSet();
            memory.putInt(0, 1);
            System.out.println("buffer reads=" + before + "," + word.isSet());
            p.close();
        }
    }

    /** With the library: a real tracepoint; in a kernel with user_events, ftrace enables it. */
    static final class WithLibrary {
        public static void main(String[] args) throws IOException {
            Provider p = new Provider("jdk24");
            Tracepoint tp = p.tracepoint("native", Field.u32("n"));
            System.out.println("route=" + EnableWord.route());
            System.out.println("enabled=" + tp.isEnabled());
            System.out.println("zero=" + EnableWord.zero().isSet());
            if (tp.isRegistered()) {
                Ftrace.enable(tp.name(), true);
                System.out.println("ftrace enabled=" + tp.isEnabled());
                tp.emit(1);
                Ftrace.enable(tp.name(), false);
                System.out.println("ftrace disabled=" + tp.isEnabled());
            }
            p.close();
            System.out.println("closed enabled=" + tp.isEnabled());
        }
    }

    @Test
    void without_the_library_the_zero_word_is_read_through_a_view_and_nothing_is_printed() throws Exception {
        Path java = ChildJvm.java24();
        // A library that is not there: System.load fails (and, without
        // native access, would warn for that alone).
        ChildJvm r = ChildJvm.run(java, WithoutLibrary.class, "--enable-native-access=ALL-UNNAMED",
                "-Dusertrace.native.path=/nonexistent/libusertrace_jni.so");
        assertEquals("", r.err, "stderr of " + java);
        assertTrue(r.out.contains("route=BUFFER"), r.out);
        assertTrue(r.out.contains("enabled=false"), r.out);
        assertTrue(r.out.contains("zero=false"), r.out);
        assertTrue(r.out.contains("buffer reads=false,true"), r.out);
    }

    @Test
    void with_native_access_denied_tracepoints_are_disabled_no_ops_read_through_a_view() throws Exception {
        Path java = ChildJvm.java24();
        // JNI's load throws IllegalCallerException: no library, as if none were there.
        ChildJvm r = ChildJvm.run(java, WithoutLibrary.class, "--illegal-native-access=deny");
        assertEquals("", r.err, "stderr of " + java);
        assertTrue(r.out.contains("route=BUFFER"), r.out);
        assertTrue(r.out.contains("enabled=false"), r.out);
        assertTrue(r.out.contains("buffer reads=false,true"), r.out);
    }

    @Test
    @Tag("host")
    void with_the_library_and_native_access_the_segment_reads_false_and_nothing_is_printed() throws Exception {
        Path java = ChildJvm.java24();
        ChildJvm r = ChildJvm.run(java, WithLibrary.class, "--enable-native-access=ALL-UNNAMED");
        assertEquals("", r.err, "stderr of " + java);
        assertTrue(r.out.contains("route=SEGMENT"), r.out);
        assertTrue(r.out.contains("\nenabled=false"), r.out);
        assertTrue(r.out.contains("zero=false"), r.out);
        assertTrue(r.out.contains("closed enabled=false"), r.out);
    }

    @Test
    void without_native_access_the_one_warning_is_jnis_own() throws Exception {
        Path java = ChildJvm.java24();
        ChildJvm r = ChildJvm.run(java, WithLibrary.class);
        assertTrue(r.out.contains("route=SEGMENT"), r.out);
        assertTrue(r.out.contains("closed enabled=false"), r.out);
        assertEquals(1, r.err.split(RESTRICTED, -1).length - 1, "one restricted-method warning: " + r.err);
        assertTrue(r.err.contains(RESTRICTED + "java.lang.System has been called"), r.err);
        assertTrue(!r.err.contains("MemorySegment") && !r.err.contains("sun.misc.Unsafe"), r.err);
    }

    @Test
    @Tag("kernel")
    void in_a_kernel_with_user_events_the_segment_sees_ftrace_enable_and_disable() throws Exception {
        Kernel.require();
        Path java = ChildJvm.java24();
        ChildJvm r = ChildJvm.run(java, WithLibrary.class, "--enable-native-access=ALL-UNNAMED");
        assertEquals("", r.err, "stderr of " + java);
        assertTrue(r.out.contains("route=SEGMENT"), r.out);
        assertTrue(r.out.contains("\nenabled=false"), r.out);
        assertTrue(r.out.contains("ftrace enabled=true"), r.out);
        assertTrue(r.out.contains("ftrace disabled=false"), r.out);
        assertTrue(r.out.contains("closed enabled=false"), r.out);
    }
}

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
 * isEnabled() reads through a ByteBuffer view: stderr stays empty. Runs the
 * newest JDK 24+ found: {@code -Dusertrace.java24=JAVA_HOME},
 * {@code $USERTRACE_JAVA24_HOME}, else the newest in /usr/lib/jvm; skipped
 * when there is none.
 */
class OnJdk24AndLaterTheWordIsReadWithoutWarningsTest {
    /**
     * The reads alone, with no JNI library: even a failed System.load warns
     * without --enable-native-access (JEP 472), which would hide whether the
     * reads themselves need it.
     */
    static final class WithoutLibrary {
        public static void main(String[] args) {
            System.out.println("route=" + EnableWord.route());
            System.out.println("zero=" + EnableWord.zero().isSet());
            ByteBuffer memory = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
            EnableWord word = EnableWord.of(memory);
            boolean before = word.isSet();
            memory.putInt(0, 1);
            System.out.println("buffer reads=" + before + "," + word.isSet());
        }
    }

    /** With the library: a real tracepoint; in a kernel with user_events, ftrace enables it. */
    static final class WithLibrary {
        public static void main(String[] args) throws IOException {
            System.out.println("route=" + EnableWord.route());
            Provider p = new Provider("jdk24");
            Tracepoint tp = p.tracepoint("native", Field.u32("n"));
            System.out.println("enabled=" + tp.isEnabled());
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
    void reading_a_word_needs_no_native_access_and_prints_nothing_on_stderr() throws Exception {
        Path java = ChildJvm.java24();
        // No --enable-native-access: a ByteBuffer view is not restricted.
        ChildJvm r = ChildJvm.run(java, WithoutLibrary.class);
        assertEquals("", r.err, "stderr of " + java);
        assertTrue(r.out.contains("route=BUFFER"), r.out);
        assertTrue(r.out.contains("zero=false"), r.out);
        assertTrue(r.out.contains("buffer reads=false,true"), r.out);
    }

    @Test
    @Tag("host")
    void with_the_library_a_tracepoint_reads_false_and_prints_nothing_on_stderr() throws Exception {
        Path java = ChildJvm.java24();
        // JNI's System.load itself warns from JDK 24 on without this (JEP 472).
        ChildJvm r = ChildJvm.run(java, WithLibrary.class, "--enable-native-access=ALL-UNNAMED");
        assertEquals("", r.err, "stderr of " + java);
        assertTrue(r.out.contains("route=BUFFER"), r.out);
        assertTrue(r.out.contains("enabled=false"), r.out);
        assertTrue(r.out.contains("closed enabled=false"), r.out);
    }

    @Test
    @Tag("kernel")
    void in_a_kernel_with_user_events_the_view_sees_ftrace_enable_and_disable() throws Exception {
        Kernel.require();
        Path java = ChildJvm.java24();
        ChildJvm r = ChildJvm.run(java, WithLibrary.class, "--enable-native-access=ALL-UNNAMED");
        assertEquals("", r.err, "stderr of " + java);
        assertTrue(r.out.contains("route=BUFFER"), r.out);
        assertTrue(r.out.contains("\nenabled=false"), r.out);
        assertTrue(r.out.contains("ftrace enabled=true"), r.out);
        assertTrue(r.out.contains("ftrace disabled=false"), r.out);
        assertTrue(r.out.contains("closed enabled=false"), r.out);
    }
}

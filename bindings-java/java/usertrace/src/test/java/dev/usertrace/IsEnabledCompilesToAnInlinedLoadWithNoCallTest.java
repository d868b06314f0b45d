package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.usertrace.internal.EnableWord;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 6: in a hot loop, {@code isEnabled()} is the load of the word and
 * nothing else. C2 must inline it and all it calls (no call, so no JNI
 * either), down to Unsafe's {@code getIntVolatile} intrinsic, which it turns
 * into a plain load. Read from {@code -XX:+PrintInlining} of a child JVM: the
 * machine code itself would need hsdis, which is not at hand. On JDK 17 to
 * 23 (this JDK), the Unsafe route; on JDK 24+ (the newest found, see
 * {@link ChildJvm#java24()}), the constant segment's route, whose VarHandle
 * read must inline down to the JDK's own {@code Unsafe::getIntOpaque}: the
 * ByteBuffer view it replaced left a call in a plain application
 * ("unloaded signature classes").
 */
class IsEnabledCompilesToAnInlinedLoadWithNoCallTest {
    /** Calls isEnabled() on a tracepoint with a native word until C2 compiles the loop. */
    static final class HotLoop {
        static int countEnabled(Tracepoint tp, int n) {
            int enabled = 0;
            for (int i = 0; i < n; i++) {
                if (tp.isEnabled()) {
                    enabled++;
                }
            }
            return enabled;
        }

        public static void main(String[] args) {
            Provider p = new Provider("inlining");
            Tracepoint tp = p.tracepoint("hot_loop", Field.u32("n"));
            System.out.println("route=" + EnableWord.route());
            System.out.println("native word=" + (tp.handle != 0));
            int enabled = 0;
            for (int k = 0; k < 200; k++) {
                enabled += countEnabled(tp, 100_000);
            }
            System.out.println("enabled=" + enabled);
            p.close();
        }
    }

    /** One line of an inlining tree: {@code @ bci  method (n bytes)  decision}, indented by depth. */
    private static final Pattern NODE = Pattern.compile("^([\\s!]*)@ \\d+\\s+(\\S+) \\(\\d+ bytes\\)\\s*(.*)$");

    private static final class Node {
        final int depth;
        final String method;
        final String decision;
        final String line;

        Node(int depth, String method, String decision, String line) {
            this.depth = depth;
            this.method = method;
            this.decision = decision;
            this.line = line;
        }
    }

    @Test
    void on_jdk_17_to_23_c2_inlines_isEnabled_down_to_the_getIntVolatile_intrinsic() throws Exception {
        assumeTrue(EnableWord.route() == EnableWord.Route.UNSAFE, "JDK 24+ reads through a ByteBuffer view");
        ChildJvm r = ChildJvm.run(ChildJvm.thisJava(), HotLoop.class, PRINT_C2_INLINING);
        assertInlinedDownTo(r, "route=UNSAFE", "Unsafe::getIntVolatile");
    }

    @Test
    void on_jdk_24_and_later_c2_inlines_isEnabled_down_to_the_segment_reads_getIntOpaque_intrinsic() throws Exception {
        java.nio.file.Path java = ChildJvm.java24();
        List<String> args = new ArrayList<>(List.of(PRINT_C2_INLINING));
        // What JNI needs anyway (JEP 472); the segment route needs nothing more.
        args.add(0, "--enable-native-access=ALL-UNNAMED");
        ChildJvm r = ChildJvm.run(java, HotLoop.class, args.toArray(new String[0]));
        assertInlinedDownTo(r, "route=SEGMENT", "Unsafe::getIntOpaque");
    }

    private static final String[] PRINT_C2_INLINING = {
        "-XX:+UnlockDiagnosticVMOptions", "-XX:+PrintCompilation", "-XX:+PrintInlining",
        // C2 only, so that every tree printed is C2's (C1 inlines less, and
        // tiered output interleaves the tiers); compiled at once.
        "-XX:-TieredCompilation", "-XX:-BackgroundCompilation",
        "-XX:CompileCommand=quiet", "-XX:CompileCommand=compileonly," + HotLoop.class.getName() + "::countEnabled",
    };

    /** Every isEnabled() that C2 compiled into the loop is inlined, calls nothing, and reads with {@code read}. */
    private static void assertInlinedDownTo(ChildJvm r, String route, String read) {
        assertTrue(r.out.contains(route), r.out);
        assertTrue(r.out.contains("native word=true"), "the library must load, for a real native word: " + r.out);
        List<List<Node>> trees = isEnabledTrees(r.out);
        assertFalse(trees.isEmpty(), "C2 compiled no loop that inlines Tracepoint::isEnabled:\n" + r.out);
        for (List<Node> tree : trees) {
            String shown = show(tree);
            assertTrue(tree.get(0).decision.startsWith("inline"), "isEnabled() not inlined:\n" + shown);
            boolean intrinsic = false;
            for (Node n : tree) {
                // "accessor": a getter of a field, inlined as its load.
                boolean inlined = (n.decision.contains("inline") || n.decision.equals("accessor"))
                        && !n.decision.contains("failed");
                // Anything neither inlined nor an intrinsic is a real call.
                assertTrue(inlined || n.decision.contains("(intrinsic)"), "a call left in isEnabled():\n" + shown);
                assertFalse(n.method.startsWith("dev.usertrace.internal.Native::") || n.decision.contains("native"),
                        "a JNI method in isEnabled():\n" + shown);
                intrinsic |= n.method.endsWith(read) && n.decision.contains("(intrinsic)");
            }
            assertTrue(intrinsic, "the word is not read by the " + read + " intrinsic:\n" + shown);
        }
    }

    /** Each {@code Tracepoint::isEnabled} node of the printed inlining trees, with its subtree. */
    private static List<List<Node>> isEnabledTrees(String out) {
        List<List<Node>> trees = new ArrayList<>();
        List<Node> tree = null;
        for (String line : out.split("\n")) {
            Matcher m = NODE.matcher(line);
            Node n = m.matches() ? new Node(m.group(1).length(), m.group(2), m.group(3).trim(), line) : null;
            if (tree != null && (n == null || n.depth <= tree.get(0).depth)) {
                trees.add(tree);
                tree = null;
            }
            if (tree != null) {
                tree.add(n);
            } else if (n != null && n.method.equals("dev.usertrace.Tracepoint::isEnabled")) {
                tree = new ArrayList<>(List.of(n));
            }
        }
        if (tree != null) {
            trees.add(tree);
        }
        return trees;
    }

    private static String show(List<Node> tree) {
        StringBuilder s = new StringBuilder();
        for (Node n : tree) {
            s.append(n.line).append('\n');
        }
        return s.toString();
    }
}

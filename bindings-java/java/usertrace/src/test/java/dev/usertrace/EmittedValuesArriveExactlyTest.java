package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** In the guest kernel: what Java emits is what ftrace shows, field by field. */
@Tag("kernel")
class EmittedValuesArriveExactlyTest {
    static final Field[] FIELDS = {
        Field.u8("a"), Field.u16("b"), Field.u32("c"), Field.u64("d"), Field.i8("e"), Field.i16("f"), Field.i32("g"),
        Field.i64("h"), Field.bool("i"), Field.f32("j"), Field.f64("k"), Field.charArray("l", 8), Field.string("m"),
    };

    @Test
    void every_field_type_arrives_with_its_value_in_ftrace() throws Exception {
        Kernel.require();
        try (Provider p = new Provider("jtest")) {
            Tracepoint tp = p.tracepoint("exact", FIELDS);
            assertTrue(tp.isRegistered());
            assertFalse(tp.isEnabled(), "nobody listens yet");
            Ftrace.clear();
            Ftrace.enable(tp.name(), true);
            try {
                assertTrue(tp.isEnabled(), "ftrace enabled the event: the kernel must have set the word");
                tp.emit(255, 65535, 4294967295L, -1L, -128, -32768, Integer.MIN_VALUE, Long.MIN_VALUE, true, 1.5f, -2.25,
                        "abc", "héllo wörld €𝄞 \uD800!");
                tp.event().put(1).put(2).put(3).put(4).put(5).put(6).put(7).put(8).put(false).put(0.0).put(0.0)
                        .put("12345678").put("").emit();
            } finally {
                Ftrace.enable(tp.name(), false);
            }
            assertFalse(tp.isEnabled(), "ftrace disabled the event");
            List<String> lines = Ftrace.lines(tp.name());
            assertEquals(2, lines.size(), "trace lines: " + lines);

            Map<String, String> first = Fields.parse(lines.get(0), "m");
            String all = lines.toString();
            assertEquals(255, Fields.bits(first.get("a"), 1), all);
            assertEquals(65535, Fields.bits(first.get("b"), 2), all);
            assertEquals(4294967295L, Fields.bits(first.get("c"), 4), all);
            assertEquals(-1L, Fields.bits(first.get("d"), 8), all);
            assertEquals(-128 & 0xff, Fields.bits(first.get("e"), 1), all);
            assertEquals(-32768 & 0xffff, Fields.bits(first.get("f"), 2), all);
            assertEquals(Integer.MIN_VALUE & 0xffff_ffffL, Fields.bits(first.get("g"), 4), all);
            assertEquals(Long.MIN_VALUE, Fields.bits(first.get("h"), 8), all);
            assertEquals(1, Fields.bits(first.get("i"), 1), all);
            assertEquals(Float.floatToRawIntBits(1.5f) & 0xffff_ffffL, Fields.bits(first.get("j"), 4), all);
            assertEquals(Double.doubleToRawLongBits(-2.25), Fields.bits(first.get("k"), 8), all);
            assertEquals("abc", first.get("l"), all);
            assertEquals("héllo wörld €𝄞 \uFFFD!", first.get("m"), all);

            Map<String, String> second = Fields.parse(lines.get(1), "m");
            assertEquals(1, Fields.bits(second.get("a"), 1), all);
            assertEquals(8, Fields.bits(second.get("h"), 8), all);
            assertEquals(0, Fields.bits(second.get("i"), 1), all);
            assertEquals("12345678", second.get("l"), all);
            assertEquals("", second.get("m"), all);
        }
    }

    /** The native emit's error path (boundary::hot): an exception, then the next emit as if nothing happened. */
    @Test
    void an_enabled_emit_the_core_refuses_throws_and_the_next_one_arrives() throws Exception {
        Kernel.require();
        try (Provider p = new Provider("jtest")) {
            Tracepoint tp = p.tracepoint("refused", Field.u32("n"), Field.string("s"));
            Ftrace.clear();
            Ftrace.enable(tp.name(), true);
            try {
                assertTrue(tp.isEnabled());
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> tp.emit(1, "a\0b"));
                assertTrue(e.getMessage().startsWith("field s of event jtest_refused got a string with a NUL"),
                        e.getMessage());
                tp.event().put(2).put("ok").emit();
            } finally {
                Ftrace.enable(tp.name(), false);
            }
            List<String> lines = Ftrace.lines(tp.name());
            assertEquals(1, lines.size(), "trace lines: " + lines);
            Map<String, String> only = Fields.parse(lines.get(0), "s");
            assertEquals(2, Fields.bits(only.get("n"), 4), lines.toString());
            assertEquals("ok", only.get("s"), lines.toString());
        }
    }

    @Test
    void close_unregisters_and_the_word_reads_false() throws Exception {
        Kernel.require();
        Provider p = new Provider("jtest");
        Tracepoint tp = p.tracepoint("closing", Field.u32("n"));
        Ftrace.enable(tp.name(), true);
        try {
            assertTrue(tp.isEnabled());
            tp.close();
            assertFalse(tp.isEnabled());
            assertFalse(tp.isRegistered());
            tp.emit(1);
        } finally {
            Ftrace.enable(tp.name(), false);
        }
        p.close();
    }

    @Test
    void other_fields_under_a_registered_name_are_a_typed_exception() {
        Kernel.require();
        try (Provider p = new Provider("jtest")) {
            p.tracepoint("mismatch", Field.u32("n"));
            UsertraceException e = assertThrows(UsertraceException.class, () -> p.tracepoint("mismatch", Field.u64("n")));
            assertEquals(ErrorKind.FIELDS_MISMATCH, e.kind());
            assertTrue(e.getMessage().contains("jtest_mismatch"), e.getMessage());
        }
    }

    @Test
    void many_threads_emit_while_tracepoints_are_closed_and_collected() throws Exception {
        Kernel.require();
        Provider p = new Provider("jtest");
        Tracepoint tp = p.tracepoint("churn", Field.u32("n"), Field.string("s"));
        Ftrace.enable(tp.name(), true);
        try {
            Thread[] threads = new Thread[4];
            for (int t = 0; t < threads.length; t++) {
                threads[t] = new Thread(() -> {
                    for (int i = 0; i < 500; i++) {
                        tp.emit(i, "x" + i);
                    }
                });
                threads[t].start();
            }
            for (int i = 0; i < 200; i++) {
                p.tracepoint("churn", Field.u32("n"), Field.string("s")).close();
            }
            tp.close();
            for (Thread t : threads) {
                t.join();
            }
            System.gc();
        } finally {
            Ftrace.enable("jtest_churn", false);
        }
        p.close();
    }
}

package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Values and definitions are checked in Java, and the exception names the field and event. */
class BadInputNamesTheFieldTest {
    static Provider provider;
    static Tracepoint tp;

    @BeforeAll
    static void setUp() {
        provider = new Provider("checks");
        tp = provider.tracepoint("ev", Field.u8("small"), Field.i16("signed16"), Field.u32("count"), Field.u64("big"),
                Field.bool("flag"), Field.f64("ratio"), Field.charArray("comm", 4), Field.string("path"), Field.bytes("blob"));
    }

    @AfterAll
    static void tearDown() {
        provider.close();
    }

    static String message(Class<? extends Throwable> type, Executable e) {
        return assertThrows(type, e).getMessage();
    }

    @Test
    void good_values_pass() {
        tp.validate(255, -32768, 4294967295L, -1L, true, 0.5, "abcd", "ok", new byte[] {1});
        tp.validate(0, 32767, 0, Long.MAX_VALUE, false, 1, "ab€".substring(0, 2), "", new byte[0]);
    }

    @Test
    void out_of_range_integers_name_the_field() {
        String m = message(IllegalArgumentException.class,
                () -> tp.validate(256, 0, 0, 0, true, 0.0, "", "", new byte[0]));
        assertEquals("field small of event checks_ev is u8; 256 does not fit (0..255)", m);
        m = message(IllegalArgumentException.class,
                () -> tp.validate(0, 0, -1, 0, true, 0.0, "", "", new byte[0]));
        assertTrue(m.startsWith("field count of event checks_ev is u32"), m);
    }

    @Test
    void wrong_types_name_the_field() {
        String m = message(IllegalArgumentException.class,
                () -> tp.validate(0, 0, 0, 0, "yes", 0.0, "", "", new byte[0]));
        assertEquals("field flag of event checks_ev is bool, but a String was given", m);
        m = message(IllegalArgumentException.class,
                () -> tp.validate(0, 0, 0, 0, true, 0.0, "", null, new byte[0]));
        assertEquals("field path of event checks_ev is string, but null was given", m);
        m = message(IllegalArgumentException.class,
                () -> tp.validate(0, 0, 0, 0, true, 0.0, "", "", new Object()));
        assertEquals("field blob of event checks_ev is bytes, but a java.lang.Object was given", m);
    }

    @Test
    void strings_with_nul_and_too_long_char_arrays_are_refused() {
        String m = message(IllegalArgumentException.class,
                () -> tp.validate(0, 0, 0, 0, true, 0.0, "", "a\0b", new byte[0]));
        assertTrue(m.startsWith("field path of event checks_ev got a string with a NUL"), m);
        m = message(IllegalArgumentException.class,
                () -> tp.validate(0, 0, 0, 0, true, 0.0, "abcé", "", new byte[0]));
        assertEquals("field comm of event checks_ev holds 4 bytes, but the value has 5 (UTF-8)", m);
    }

    @Test
    void the_number_of_values_must_match() {
        String m = message(IllegalArgumentException.class, () -> tp.validate(1, 2));
        assertEquals("event checks_ev has 9 fields but 2 values were given", m);
        m = message(IllegalArgumentException.class, () -> tp.event().put(1).emit());
        assertEquals("event checks_ev has 9 fields but 1 values were given", m);
    }

    @Test
    void an_emitted_writer_cannot_be_reused() {
        Tracepoint one = provider.tracepoint("one", Field.u8("n"));
        EventWriter w = one.event().put(1);
        w.emit();
        assertThrows(IllegalStateException.class, () -> w.put(2));
    }

    @Test
    void oversized_events_are_refused_before_the_kernel() {
        Tracepoint b = provider.tracepoint("huge", Field.bytes("b"));
        UsertraceException e = assertThrows(UsertraceException.class, () -> b.validate((Object) new byte[9000]));
        assertEquals(ErrorKind.PAYLOAD_TOO_LARGE, e.kind());
    }

    @Test
    void bad_definitions_are_typed_exceptions() {
        assertEquals(ErrorKind.INVALID_NAME, assertThrows(UsertraceException.class, () -> new Provider("a:b")).kind());
        assertEquals(ErrorKind.INVALID_NAME,
                assertThrows(UsertraceException.class, () -> provider.tracepoint("x y", Field.u8("n"))).kind());
        UsertraceException e = assertThrows(UsertraceException.class, () -> provider.tracepoint("dup", Field.u8("n"), Field.u16("n")));
        assertEquals(ErrorKind.INVALID_NAME, e.kind());
        assertEquals(ErrorKind.INVALID_FORMAT, assertThrows(UsertraceException.class, () -> Field.charArray("c", 1025)).kind());
        Field[] many = new Field[33];
        for (int i = 0; i < many.length; i++) {
            many[i] = Field.u8("f" + i);
        }
        assertEquals(ErrorKind.INVALID_FORMAT, assertThrows(UsertraceException.class, () -> provider.tracepoint("many", many)).kind());
        Field[] longNames = new Field[20];
        for (int i = 0; i < longNames.length; i++) {
            longNames[i] = Field.string("field_with_a_long_name_" + i);
        }
        e = assertThrows(UsertraceException.class, () -> provider.tracepoint("long", longNames));
        assertEquals(ErrorKind.INVALID_FORMAT, e.kind());
        assertTrue(e.getMessage().contains("511"), e.getMessage());
    }
}

package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Bad values and definitions are refused with an exception that names the
 * field and event: Java checks what only it sees (Java types, a long that does
 * not fit its field), the native library the rest, in the core's words.
 */
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
        assertEquals("field small of event checks_ev is u8, but 256 was given, which does not fit (0..255)", m);
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
        assertEquals("field comm of event checks_ev holds 4 bytes, but the value has 5", m);
        m = message(IllegalArgumentException.class,
                () -> tp.validate(0, 0, 0, 0, true, 0.0, new byte[] {1, 2, 3, 4, 5}, "", new byte[0]));
        assertEquals("field comm of event checks_ev holds 4 bytes, but the value has 5", m);
        // A char[N] holds any bytes, a NUL or bytes that are not UTF-8 too.
        tp.validate(0, 0, 0, 0, true, 0.0, new byte[] {0, (byte) 0xff}, "", new byte[0]);
        tp.validate(0, 0, 0, 0, true, 0.0, "a\0b", "", new byte[0]);
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
        // At the limit: 4 bytes of __rel_loc and 8180 of data are perf's 8184; one more is refused by the
        // native library's check, as the Java buffer still holds it.
        b.validate((Object) new byte[8180]);
        e = assertThrows(UsertraceException.class, () -> b.validate((Object) new byte[8181]));
        assertEquals(ErrorKind.PAYLOAD_TOO_LARGE, e.kind());
        assertEquals("event checks_huge would carry 8185 bytes; perf records at most 8184 per event, so it was not written",
                e.getMessage());
    }

    @Test
    void bad_definitions_are_typed_exceptions() {
        assertEquals(ErrorKind.INVALID_NAME, assertThrows(UsertraceException.class, () -> new Provider("a:b")).kind());
        assertEquals(ErrorKind.INVALID_NAME,
                assertThrows(UsertraceException.class, () -> provider.tracepoint("x y", Field.u8("n"))).kind());
        UsertraceException e = assertThrows(UsertraceException.class, () -> provider.tracepoint("ok", Field.u8("n m")));
        assertEquals(ErrorKind.INVALID_NAME, e.kind());
        assertTrue(e.getMessage().startsWith("invalid field name \"n m\""), e.getMessage());
        e = assertThrows(UsertraceException.class, () -> provider.tracepoint("dup", Field.u8("n"), Field.u16("n")));
        assertEquals(ErrorKind.DUPLICATE_FIELD, e.kind());
        assertEquals("event checks_dup declares field n twice; give each field its own name", e.getMessage());
        assertEquals(ErrorKind.EMPTY_CHAR_ARRAY,
                assertThrows(UsertraceException.class, () -> provider.tracepoint("c0", Field.charArray("c", 0))).kind());
        assertEquals(ErrorKind.INVALID_FORMAT, assertThrows(UsertraceException.class,
                () -> provider.tracepoint("c", Field.charArray("c", Field.MAX_CHAR_ARRAY + 1))).kind());
        provider.tracepoint("c", Field.charArray("c", Field.MAX_CHAR_ARRAY)).close();
        assertThrows(IllegalArgumentException.class, () -> Field.charArray("c", -1));
        Field[] many = new Field[Tracepoint.MAX_FIELDS + 1];
        for (int i = 0; i < many.length; i++) {
            many[i] = Field.u8("f" + i);
        }
        e = assertThrows(UsertraceException.class, () -> provider.tracepoint("many", many));
        assertEquals(ErrorKind.TOO_MANY_FIELDS, e.kind());
        assertEquals("event checks_many declares 33 fields; at most 32 are supported: split it into several events", e.getMessage());
        provider.tracepoint("most", java.util.Arrays.copyOf(many, Tracepoint.MAX_FIELDS)).close();
        Field[] longNames = new Field[20];
        for (int i = 0; i < longNames.length; i++) {
            longNames[i] = Field.string("field_with_a_long_name_" + i);
        }
        e = assertThrows(UsertraceException.class, () -> provider.tracepoint("long", longNames));
        assertEquals(ErrorKind.INVALID_FORMAT, e.kind());
        assertTrue(e.getMessage().contains("511"), e.getMessage());
    }
}

package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usertrace.internal.Native;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * FieldType, ErrorKind and Availability are the core's code tables, and Span's
 * names the core's span convention, exactly:
 * renumbering, renaming or adding an entry on either side fails here. The
 * tables come from the JNI library, which takes them from the core.
 */
class JavaEnumsAreTheNativeTablesTest {
    static List<String> rows(String[] table) {
        assertTrue(Native.isLoaded(), "the native library should load: " + Native.loadError());
        return List.of(table);
    }

    @Test
    void field_types_have_the_cores_codes_and_names() {
        List<String> java = new ArrayList<>();
        for (FieldType t : FieldType.values()) {
            java.add(t.code() + "\t" + t.declaredName() + "\t" + t.displayName());
        }
        assertEquals(rows(Native.fieldTypes0()), java);
    }

    @Test
    void error_kinds_have_the_cores_codes_and_names() {
        List<String> java = new ArrayList<>();
        for (ErrorKind k : ErrorKind.values()) {
            java.add(k.code() + "\t" + k.name());
            assertEquals(k, ErrorKind.of(k.code()));
        }
        assertEquals(rows(Native.errorKinds0()), java);
    }

    @Test
    void span_names_are_the_cores() {
        assertEquals(rows(Native.spanNames0()), List.of(Span.BEGIN_FIELD, Span.END_FIELD, Span.END_EVENT,
                Span.START_NS_FIELD, Span.DURATION_NS_FIELD));
    }

    @Test
    void availabilities_have_the_cores_codes_and_names() {
        List<String> java = new ArrayList<>();
        for (Availability a : Availability.values()) {
            if (a != Availability.NATIVE_LIBRARY_UNAVAILABLE) { // Java's own: the core never says it
                java.add(a.code() + "\t" + a.name().toLowerCase(Locale.ROOT));
                assertEquals(a, Availability.of(a.code()));
            }
        }
        assertEquals(rows(Native.availabilities0()), java);
        for (String row : rows(Native.availabilities0())) {
            assertTrue(!row.startsWith(Availability.NATIVE_LIBRARY_UNAVAILABLE.code() + "\t"), row);
        }
    }
}

package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.HexFormat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The end-to-end tests' comparison sees content, not encoding, and misses no difference of content. */
@Tag("host")
class CanonicalTest {
    static byte[] hex(String s) {
        return HexFormat.of().parseHex(s);
    }

    // name "ab" (5), kind 2 (6), attributes k=v then l=w (9): as the Java SDK writes them.
    static final String NAME = "2a026162";
    static final String KIND = "3002";
    static final String KV = "4a0a0a016b12050a03767676";
    static final String LW = "4a0a0a016c12050a03777777";

    @Test
    void fields_in_another_order_and_an_empty_parent_are_the_same_content() {
        assertEquals(Canonical.of(hex(NAME + KIND + KV + LW)), Canonical.of(hex("2200" + KIND + NAME + KV + LW)));
        // The Collector's way: descending field numbers, each sub-message's fields reversed too.
        assertEquals(Canonical.of(hex(NAME + KIND + KV)), Canonical.of(hex("4a0a12050a037676760a016b" + KIND + NAME)));
    }

    @Test
    void another_value_or_another_order_of_repeated_fields_differs() {
        String base = Canonical.of(hex(NAME + KIND + KV + LW));
        assertNotEquals(base, Canonical.of(hex(NAME + KIND + KV.replace("767676", "767677") + LW)));
        assertNotEquals(base, Canonical.of(hex(NAME + "3003" + KV + LW)));
        assertNotEquals(base, Canonical.of(hex(NAME + KIND + LW + KV)));
        assertNotEquals(base, Canonical.of(hex(NAME + KIND + KV)));
    }
}

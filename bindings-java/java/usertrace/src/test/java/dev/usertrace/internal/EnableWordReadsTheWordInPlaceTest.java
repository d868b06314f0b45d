package dev.usertrace.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** isEnabled()'s read: the route this JDK should take, and that it sees each write, in place. */
class EnableWordReadsTheWordInPlaceTest {
    @Test
    void the_route_is_unsafe_before_jdk_24_and_the_constant_segment_from_24_on() {
        // From 24 on only from the jar, or with META-INF/versions/22 on the class path.
        EnableWord.Route expected = Runtime.version().feature() >= 24 ? EnableWord.Route.SEGMENT : EnableWord.Route.UNSAFE;
        assertEquals(expected, EnableWord.route(), "on JDK " + Runtime.version());
    }

    @Test
    void a_word_reads_every_write_to_its_memory() {
        assertTrue(Native.isLoaded(), "the Unsafe route takes the address through JNI: " + Native.loadError());
        ByteBuffer memory = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
        EnableWord word = EnableWord.of(memory);
        assertFalse(word.isSet());
        memory.putInt(0, 1);
        assertTrue(word.isSet());
        memory.putInt(0, 1 << 31); // the kernel may use any bit
        assertTrue(word.isSet());
        memory.putInt(0, 0);
        assertFalse(word.isSet());
    }

    @Test
    void the_zero_word_is_never_set() {
        assertFalse(EnableWord.zero().isSet());
    }

    @Test
    void a_heap_buffer_is_refused() {
        assertThrows(IllegalArgumentException.class, () -> EnableWord.of(ByteBuffer.allocate(4)));
    }
}

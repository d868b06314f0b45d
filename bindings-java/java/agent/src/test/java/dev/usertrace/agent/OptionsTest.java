package dev.usertrace.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class OptionsTest {
    @Test
    void defaults_forward_everything_but_safepoints() {
        Options o = Options.parse(null);
        assertEquals("jvm", o.provider());
        assertTrue(o.gc() && o.gcPause() && o.exceptions() && o.jul());
        assertFalse(o.safepoints());
        assertEquals(200, o.pollMillis());
        assertEquals(0, o.startWaitSeconds(), "main never waits unless asked");
    }

    @Test
    void each_source_can_be_switched() {
        Options o = Options.parse("provider=app, gc=off,safepoints,exceptions=false,jul=0,poll=50,startwait=120");
        assertEquals("app", o.provider());
        assertFalse(o.gc());
        assertTrue(o.safepoints());
        assertFalse(o.exceptions());
        assertFalse(o.jul());
        assertEquals(50, o.pollMillis());
        assertEquals(120, o.startWaitSeconds());
    }

    @Test
    void numbers_that_are_not_or_too_small_are_refused_naming_the_option() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Options.parse("startwait=soon"));
        assertEquals("usertrace agent: startwait=soon is not a number of s", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Options.parse("startwait=-1"));
        assertEquals("usertrace agent: startwait must be at least 0 s", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Options.parse("poll=0"));
        assertEquals("usertrace agent: poll must be at least 1 ms", e.getMessage());
    }

    @Test
    void unknown_options_are_refused_with_the_usage() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Options.parse("gcc=1"));
        assertTrue(e.getMessage().contains("unknown option 'gcc'"), e.getMessage());
        assertTrue(e.getMessage().contains("provider=jvm"), e.getMessage());
    }
}

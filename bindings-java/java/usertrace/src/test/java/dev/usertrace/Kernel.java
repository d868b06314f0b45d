package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Test helper for the `kernel` tests, which run in the guest kernel: they fail, never skip, without user_events. */
final class Kernel {
    private Kernel() {}

    static void require() {
        Status s = Usertrace.status();
        assertTrue(s.isAvailable(), "this test needs user_events (run it with run-tests.sh guest): " + s.message());
    }
}

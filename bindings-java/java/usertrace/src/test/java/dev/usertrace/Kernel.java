package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Test helper for the `kernel` tests, which run in the guest kernel: they fail, never skip, without user_events. */
final class Kernel {
    private Kernel() {}

    static void require() {
        Status s = Usertrace.status();
        assertTrue(s.isAvailable(), "this test needs user_events (run it with run-tests.sh guest): " + s.message());
    }

    /**
     * For the tests that need only {@code usertrace record}: user_events, or
     * (with {@code -Dusertrace.shm=true}, as run-tests.sh host passes on a
     * host without user_events) the shared-memory transport, which the
     * emitters then take. Either way the test runs and asserts; it never skips.
     */
    static void requireRecorder() {
        if (!Boolean.getBoolean("usertrace.shm")) {
            require();
        }
    }
}

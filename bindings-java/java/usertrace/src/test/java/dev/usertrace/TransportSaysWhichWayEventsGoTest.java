package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link Usertrace#transport()} says which way events go, as the core decides:
 * on the host (no user_events) auto takes shared memory; in the guest, user_events.
 *
 * <p>The core reads {@code USERTRACE_TRANSPORT} once per process, so each
 * setting is asked of a new JVM.
 */
class TransportSaysWhichWayEventsGoTest {
    /** What a user would run: prints the choice, or the exception. */
    public static final class Ask {
        public static void main(String[] args) {
            try {
                TransportChoice c = Usertrace.transport();
                System.out.println("transport=" + c.transport());
                System.out.println("reason=" + c.reason());
                System.out.println("string=" + c);
            } catch (UsertraceException e) {
                System.out.println("error=" + e.kind());
                System.out.println("message=" + e.getMessage());
            }
        }
    }

    /** The lines {@link Ask} printed with {@code USERTRACE_TRANSPORT} set to {@code setting}, or unset for null. */
    static List<String> transportInChild(String setting, String... jvmArgs) throws Exception {
        ChildJvm r = ChildJvm.run(ChildJvm.thisJava(), env -> {
            // run-tests.sh host sets it for the whole suite.
            env.remove("USERTRACE_TRANSPORT");
            if (setting != null) {
                env.put("USERTRACE_TRANSPORT", setting);
            }
        }, Ask.class, jvmArgs);
        return Arrays.asList(r.out.split("\n"));
    }

    @Test
    @Tag("host")
    void unset_takes_shared_memory_on_a_kernel_without_user_events() throws Exception {
        Status s = Usertrace.status();
        assertTrue(s.availability() == Availability.TRACEFS_NOT_MOUNTED || s.availability() == Availability.USER_EVENTS_MISSING,
                s.message());
        String reason = "USERTRACE_TRANSPORT=auto: user_events is not available (" + s.availability().name().toLowerCase(java.util.Locale.ROOT)
                + "); events go through shared memory in /dev/shm instead";
        assertEquals(List.of("transport=SHM", "reason=" + reason, "string=transport shm: " + reason), transportInChild(null));
    }

    @Test
    @Tag("host")
    void a_forced_transport_is_taken_and_named_as_the_reason() throws Exception {
        assertEquals(List.of("transport=USER_EVENTS", "reason=USERTRACE_TRANSPORT=user_events",
                "string=transport user_events: USERTRACE_TRANSPORT=user_events"), transportInChild("user_events"));
        assertEquals(List.of("transport=SHM", "reason=USERTRACE_TRANSPORT=shm", "string=transport shm: USERTRACE_TRANSPORT=shm"),
                transportInChild("shm"));
    }

    @Test
    @Tag("host")
    void an_invalid_setting_throws_naming_the_variable_the_value_and_the_choices() throws Exception {
        assertEquals(List.of("error=UNAVAILABLE",
                "message=USERTRACE_TRANSPORT=bogus is not valid; use auto, user_events or shm, or unset it"), transportInChild("bogus"));
    }

    @Test
    void without_the_native_library_no_transport_carries_events_and_it_throws_saying_why() throws Exception {
        List<String> out = transportInChild(null, "-Dusertrace.native.path=/nonexistent/libusertrace_jni.so");
        assertEquals("error=UNAVAILABLE", out.get(0));
        assertTrue(out.get(1).startsWith("message=usertrace: no transport, the native library did not load: "), out.get(1));
        assertTrue(out.get(1).contains("/nonexistent/libusertrace_jni.so"), out.get(1));
    }

    @Test
    void each_transport_is_named_as_the_core_names_it() {
        assertEquals("user_events", Transport.USER_EVENTS.coreName());
        assertEquals("shm", Transport.SHM.coreName());
        assertEquals(Transport.SHM, Transport.ofCoreName("shm"));
    }

    @Test
    @Tag("kernel")
    void unset_takes_user_events_where_the_kernel_has_them() throws Exception {
        Kernel.require();
        String reason = "USERTRACE_TRANSPORT=auto: " + Usertrace.status().message();
        assertEquals(List.of("transport=USER_EVENTS", "reason=" + reason, "string=transport user_events: " + reason),
                transportInChild(null));
    }
}

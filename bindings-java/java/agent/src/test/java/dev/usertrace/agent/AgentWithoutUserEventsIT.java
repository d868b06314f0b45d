package dev.usertrace.agent;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** On the host (no user_events) the agent says why once, and the application runs unharmed. */
@Tag("host")
class AgentWithoutUserEventsIT {
    @Test
    void the_application_runs_and_the_agent_says_why_it_is_idle() throws Exception {
        String out = AgentRun.run("", "2", "10");
        assertTrue(out.contains("usertrace agent: tracepoints disabled:"), out);
        assertTrue(out.contains("user_events is not available"), out);
        assertFalse(out.contains("Exception in thread"), out);
    }

    @Test
    void bad_options_are_reported_and_the_application_still_runs() throws Exception {
        String out = AgentRun.run("gc=maybe", "1", "10");
        assertTrue(out.contains("usertrace agent: gc=maybe is not true or false"), out);
    }
}

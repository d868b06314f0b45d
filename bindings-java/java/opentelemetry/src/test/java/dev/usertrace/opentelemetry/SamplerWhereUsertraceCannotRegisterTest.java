package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Where usertrace cannot register its events, the sampler says why once in
 * the log (the same line as the exporters', as they share one registration)
 * and drops every span: nothing could record it.
 */
@Tag("host")
class SamplerWhereUsertraceCannotRegisterTest {
    @Test
    void it_says_why_once_and_drops_every_span() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(Cli.java(), "-cp", System.getProperty("java.class.path"),
                UnregisteredSamplerApp.class.getName()).redirectErrorStream(true);
        pb.environment().put("USERTRACE_TRANSPORT", "no-such-transport");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertEquals(4, count(out, "recording=false sampled=false"), out);
        assertEquals(0, count(out, "recording=true"), out);
        assertEquals(2, count(out, "exported=0"), out);
        assertEquals(1, count(out, "usertrace: OpenTelemetry spans and logs will not be recorded: "), out);
        assertTrue(out.contains("USERTRACE_TRANSPORT"), "the log says why: " + out);
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
            n++;
        }
        return n;
    }
}

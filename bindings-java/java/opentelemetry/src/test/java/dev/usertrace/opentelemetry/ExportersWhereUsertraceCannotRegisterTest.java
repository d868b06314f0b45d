package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.sdk.common.CompletableResultCode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * As Python's exporters: where usertrace cannot register its events, the
 * exporters say why once in the log and fail every export; after
 * {@code shutdown()} exports fail, as the SDK's contract says.
 */
@Tag("host")
class ExportersWhereUsertraceCannotRegisterTest {
    @Test
    void they_say_why_once_and_fail_each_export() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(Cli.java(), "-cp", System.getProperty("java.class.path"),
                UnavailableApp.class.getName()).redirectErrorStream(true);
        pb.environment().put("USERTRACE_TRANSPORT", "no-such-transport");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertEquals(2, count(out, "span export success=false"), out);
        assertEquals(2, count(out, "log export success=false"), out);
        assertEquals(1, count(out, "usertrace: OpenTelemetry spans and logs will not be recorded: "), out);
        assertTrue(out.contains("USERTRACE_TRANSPORT"), "the log says why: " + out);
        assertEquals(1, count(out, "flush success=true"), out);
    }

    @Test
    void after_shutdown_exports_fail() {
        UsertraceSpanExporter spans = new UsertraceSpanExporter();
        assertTrue(spans.shutdown().isSuccess());
        CompletableResultCode result = spans.export(List.of());
        assertFalse(result.isSuccess());
        UsertraceLogRecordExporter logs = new UsertraceLogRecordExporter();
        assertTrue(logs.shutdown().isSuccess());
        assertFalse(logs.export(List.of()).isSuccess());
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
            n++;
        }
        return n;
    }
}
